// Plans a FROM clause: store scans with their pushed-down predicates and only the columns
// the query reads, subqueries, and join trees. WHERE conjuncts that touch one side of a join
// go to that side (for a LEFT JOIN, only to the left), so job, rank and step predicates
// still reach every scan; conjuncts that touch both sides of an inner join join its ON.
// An ON conjunct `l = r` with l over the left side only and r over the right only is a hash
// join key; the rest of ON is the join's residual condition.
#pragma once

#include <cstdint>
#include <vector>

#include "query/common/query_context.h"
#include "query/planner/logical_plan.h"

namespace argus::query {

inline constexpr size_t kNotProduced = SIZE_MAX;

// Plans src with `conjuncts` (over its columns) applied. Produces at least the columns marked
// in `needed`; (*map)[i] is where column i of src lands in the operator's output, or
// kNotProduced.
LogicalOperatorPtr planFrom(BoundSource& src, std::vector<BoundExprPtr> conjuncts, std::vector<bool> needed, const QueryOptions& options,
                            std::vector<size_t>* map);

// A new operator of `type` over child (taking its columns), or with none.
LogicalOperatorPtr makeOp(LogicalOpType type, LogicalOperatorPtr child);
// Marks the columns e reads.
void collectColumns(const BoundExpr* e, std::vector<bool>* used);
// Rewrites every column reference c in e to map[c].
void remapColumns(BoundExpr* e, const std::vector<size_t>& map);

}  // namespace argus::query
