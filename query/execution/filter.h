// Filter: narrows each chunk's selection to the rows where the predicate is TRUE; the
// columns are not copied.
#pragma once

#include "query/execution/expression_executor.h"
#include "query/execution/physical_operator.h"

namespace argus::query {

class Filter final : public PhysicalOperator {
 public:
  Filter(QueryContext& ctx, PhysicalOperatorPtr child, BoundExprPtr predicate);
  bool next(DataChunk& chunk) override;
  std::string describe() const override;
  const BoundExpr& predicate() const { return *predicate_; }
  // Narrows chunk's selection to the rows where `predicate` is TRUE; false when none is.
  static bool narrow(ExpressionExecutor& predicate, DataChunk& chunk, std::vector<uint32_t>& sel);

 private:
  BoundExprPtr predicate_;
  ExpressionExecutor executor_;
  std::vector<uint32_t> sel_;
};

}  // namespace argus::query
