// Filter: narrows each chunk's selection to the rows where the predicate is TRUE; the
// columns are not copied.
#pragma once

#include "query/execution/expression_executor.h"
#include "query/execution/physical_operator.h"

namespace argus::query {

class Filter final : public PhysicalOperator {
 public:
  Filter(QueryContext& ctx, PhysicalOperatorPtr child, BoundExprPtr predicate);
  bool produce(DataChunk& chunk) override;
  std::string describe() const override;
  // A filter over each of the child's copies.
  std::vector<PhysicalOperatorPtr> split(size_t threads, SplitOrder order) override;

 private:
  BoundExprPtr predicate_;
  ExpressionExecutor executor_;
  std::vector<uint32_t> sel_;
};

}  // namespace argus::query
