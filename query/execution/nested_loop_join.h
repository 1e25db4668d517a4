// NestedLoopJoin: a join without equality keys (CROSS JOIN, FROM a, b, ON with only
// inequalities). Pairs every active left row with every buffered right row, a batch at a
// time, so the output (left x right rows) is never held whole; the residual condition and
// the deadline are applied per batch.
#pragma once

#include "query/execution/join.h"

namespace argus::query {

class NestedLoopJoin final : public Join {
 public:
  NestedLoopJoin(QueryContext& ctx, PhysicalOperatorPtr left, PhysicalOperatorPtr right, JoinType type, BoundExprPtr residual);
  std::string describe() const override;

 private:
  void addRight(const DataChunk&, size_t) override {}
  size_t indexBytes() const override { return 0; }
  void startLeft() override;
  bool nextPairs(size_t room) override;

  size_t left_row_ = 0;   // active-row position in left_
  size_t right_row_ = 0;  // next right row to pair it with
};

}  // namespace argus::query
