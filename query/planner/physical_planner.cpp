#include "query/planner/physical_planner.h"

#include "query/execution/catalog_scans.h"
#include "query/execution/filter.h"
#include "query/execution/gather.h"
#include "query/execution/hash_aggregate.h"
#include "query/execution/hash_join.h"
#include "query/execution/hop_expand.h"
#include "query/execution/limit.h"
#include "query/execution/nested_loop_join.h"
#include "query/execution/projection.h"
#include "query/execution/sort.h"
#include "query/execution/table_function_scan.h"
#include "query/execution/table_scan.h"
#include "query/execution/window_operator.h"

namespace argus::query {

PhysicalOperatorPtr createPhysicalPlan(LogicalOperator& op, QueryContext& ctx, const storage::Store& store) {
  auto child = [&](size_t i) { return createPhysicalPlan(*op.children[i], ctx, store); };
  switch (op.type) {
    case LogicalOpType::kGet:
      switch (op.table->kind) {
        case TableInfo::Kind::kJobs: return makeJobsScan(ctx, store, op.column_ids, op.predicates);
        case TableInfo::Kind::kRanks: return makeRanksScan(ctx, store, op.column_ids, op.predicates);
        case TableInfo::Kind::kKernelNames: return makeKernelNamesScan(ctx, store, op.column_ids, op.predicates);
        case TableInfo::Kind::kStackNames: return makeStackNamesScan(ctx, store, op.column_ids, op.predicates);
        case TableInfo::Kind::kNames: return makeNamesScan(ctx, store, op.column_ids, op.predicates);
        case TableInfo::Kind::kStore: return std::make_unique<TableScan>(ctx, store, *op.table, op.column_ids, op.predicates);
      }
      break;
    case LogicalOpType::kTableFunction: {
      const BoundSource& call = *op.function_call;
      return std::make_unique<TableFunctionScan>(ctx, store, *call.function, call.function_args, call.function_binding, op.column_ids,
                                                 op.predicates);
    }
    case LogicalOpType::kDummy: return std::make_unique<DummyScan>(ctx);
    case LogicalOpType::kFilter: return std::make_unique<Filter>(ctx, child(0), std::move(op.predicate));
    case LogicalOpType::kJoin: {
      PhysicalOperatorPtr join;
      if (op.left_keys.empty()) {
        join = std::make_unique<NestedLoopJoin>(ctx, child(0), child(1), op.join_type, std::move(op.predicate));
      } else {
        join = std::make_unique<HashJoin>(ctx, child(0), child(1), op.join_type, std::move(op.left_keys), std::move(op.right_keys), std::move(op.predicate));
      }
      join->names = op.names;  // qualified (s.rank)
      return join;
    }
    case LogicalOpType::kHopExpand:
      return std::make_unique<HopExpand>(ctx, child(0), std::move(op.exprs[0]), op.hop_size, op.hop_slide, op.names.back());
    case LogicalOpType::kAggregate:
      return std::make_unique<HashAggregate>(ctx, child(0), std::move(op.groups), std::move(op.aggregates), op.names, false);
    case LogicalOpType::kWindow: return std::make_unique<WindowOperator>(ctx, child(0), std::move(op.windows), op.names);
    case LogicalOpType::kProjection: return std::make_unique<Projection>(ctx, child(0), std::move(op.exprs), op.names);
    case LogicalOpType::kDistinct: {
      std::vector<BoundExprPtr> keys;
      for (size_t i = 0; i < op.types.size(); ++i) keys.push_back(makeColumnRef(i, op.types[i]));
      return std::make_unique<HashAggregate>(ctx, child(0), std::move(keys), std::vector<BoundAggregate>{}, op.names, true);
    }
    case LogicalOpType::kOrder: return std::make_unique<Sort>(ctx, gathered(ctx, child(0)), op.order, -1, 0);
    case LogicalOpType::kLimit: {
      LogicalOperator& below = *op.children[0];
      if (below.type == LogicalOpType::kOrder && op.limit >= 0) {
        return std::make_unique<Sort>(ctx, gathered(ctx, createPhysicalPlan(*below.children[0], ctx, store)), below.order, op.limit, op.offset);
      }
      return std::make_unique<Limit>(ctx, gathered(ctx, child(0)), op.limit, op.offset);
    }
  }
  return nullptr;
}

}  // namespace argus::query
