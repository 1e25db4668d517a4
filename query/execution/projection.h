// Projection: evaluates the select list over each chunk into dense output columns.
#pragma once

#include "query/execution/expression_executor.h"
#include "query/execution/physical_operator.h"

namespace argus::query {

class Projection final : public PhysicalOperator {
 public:
  Projection(QueryContext& ctx, PhysicalOperatorPtr child, std::vector<BoundExprPtr> exprs, std::vector<std::string> out_names);
  bool produce(DataChunk& chunk) override;
  std::string describe() const override;
  // A projection over each of the child's copies.
  std::vector<PhysicalOperatorPtr> split(size_t threads, SplitOrder order) override;

 private:
  std::vector<BoundExprPtr> exprs_;
  std::vector<ExpressionExecutor> executors_;
  // Per select-list entry: the input column it is, when it is a bare column no other entry
  // names; such a column moves to the output instead of being copied.
  std::vector<int> moved_from_;
  DataChunk input_;
};

}  // namespace argus::query
