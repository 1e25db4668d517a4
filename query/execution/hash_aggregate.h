// HashAggregate: GROUP BY and aggregates (and SELECT DISTINCT: groups without aggregates).
// Consumes its whole input first: per chunk it evaluates the group keys and the aggregates'
// arguments, maps rows to groups (GroupTable) and updates each aggregate's state with one
// call. Then it emits [groups..., aggregates...] in chunks. Without group keys there is
// exactly one group, even for empty input (SELECT count(*) over no rows is 0).
//
// When every aggregate merges and the input splits (PhysicalOperator::split: a table scan,
// under filters, projections and windows partitioned by rank), each thread groups one copy
// of the input pipeline; the parts are merged at the end. The groups come out in the order
// one thread would have found them (DataChunk::order).
#pragma once

#include "query/binder/bound_select.h"
#include "query/execution/expression_executor.h"
#include "query/execution/group_table.h"
#include "query/execution/physical_operator.h"

namespace argus::query {

class HashAggregate final : public PhysicalOperator {
 public:
  HashAggregate(QueryContext& ctx, PhysicalOperatorPtr child, std::vector<BoundExprPtr> groups, std::vector<BoundAggregate> aggregates,
                std::vector<std::string> out_names, bool distinct);
  ~HashAggregate() override;
  bool produce(DataChunk& chunk) override;
  std::string describe() const override;

 private:
  struct Partial;
  std::unique_ptr<Partial> newPartial() const;
  void build();
  std::unique_ptr<Partial> buildParallel(std::vector<PhysicalOperatorPtr> parts);
  std::unique_ptr<Partial> merge(std::vector<std::unique_ptr<Partial>> parts) const;

  std::vector<BoundExprPtr> groups_;
  std::vector<BoundAggregate> aggregates_;
  bool distinct_;

  bool built_ = false;
  std::unique_ptr<Partial> all_;  // every group; results_' strings point into its keys
  size_t ngroups_ = 0;
  std::vector<Vector> results_;  // one per output column, ngroups_ rows
  Arena arena_;                  // strings and histograms of the results
  size_t emitted_ = 0;
};

}  // namespace argus::query
