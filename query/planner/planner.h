// Planner: BoundSelect -> logical plan. Plans FROM (scans, subqueries, joins) through
// source_planner.h, which pushes job/rank/step predicates into store scans (pushdown.h,
// unless QueryOptions::pushdown is off), moves one-sided conjuncts below joins and prunes
// every scan to the columns the query reads, so the store decodes only those chunks.
#pragma once

#include "query/common/query_context.h"
#include "query/planner/logical_plan.h"

namespace argus::query {

LogicalOperatorPtr planSelect(BoundSelect& select, const QueryOptions& options);

}  // namespace argus::query
