// HashJoin: a join with equality keys (ON l = r AND ..., USING). The right side's rows are
// keyed in a GroupTable (one group per distinct key, with the engine's equality: NaN equals
// NaN, -0.0 equals 0.0; the binder has already cast mixed numeric keys to one type) and
// chained per group in arrival order; each left chunk's keys are looked up without adding.
// A NULL in any key never matches.
#pragma once

#include "query/execution/group_table.h"
#include "query/execution/join.h"

namespace argus::query {

class HashJoin final : public Join {
 public:
  // left_keys over the left's columns, right_keys over the right's, pairwise of one type.
  HashJoin(QueryContext& ctx, PhysicalOperatorPtr left, PhysicalOperatorPtr right, JoinType type, std::vector<BoundExprPtr> left_keys,
           std::vector<BoundExprPtr> right_keys, BoundExprPtr residual);
  std::string describe() const override;

 private:
  void addRight(const DataChunk& chunk, size_t first_row) override;
  size_t indexBytes() const override;
  void startLeft() override;
  bool nextPairs(size_t room) override;

  // Evaluates keys over chunk into keys_; marks in has_null_ the rows with a NULL key.
  void evaluateKeys(std::vector<ExpressionExecutor>& executors, const DataChunk& chunk);

  static constexpr uint32_t kEnd = UINT32_MAX;

  std::vector<BoundExprPtr> left_keys_, right_keys_;
  std::vector<ExpressionExecutor> left_exec_, right_exec_;
  GroupTable table_;
  std::vector<uint32_t> head_, tail_;  // per group: its first and last right row
  std::vector<uint32_t> next_;         // per right row: the next of its group
  // Per chunk scratch.
  std::vector<const Vector*> keys_;
  std::vector<uint8_t> has_null_;
  std::vector<uint32_t> groups_;
  // Probe position: the left row whose chain is being walked, and the chain's next row.
  size_t probe_row_ = 0;
  uint32_t chain_ = kEnd;
};

}  // namespace argus::query
