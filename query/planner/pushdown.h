// Predicate pushdown into store scans: the conjuncts of a WHERE clause that restrict the job
// (job = 'x', job IN (...)), the ranks (rank = n, rank IN (...), and rank >=, >, <, <= a
// constant when together they leave at most kMaxPushedRankRange ranks) or the step range
// (step >=, >, <, <=, = a constant; BETWEEN arrives as two of those) become a ScanSpec
// restriction and leave the filter. They are exact, so the answers are the same with and
// without pushdown.
#pragma once

#include "query/binder/bound_expression.h"
#include "query/binder/catalog.h"
#include "query/planner/logical_plan.h"

namespace argus::query {

// Widest rank range pushed down as a list of ranks (256 KiB of them; a cluster's ranks fit).
inline constexpr uint32_t kMaxPushedRankRange = 65536;

// Moves the pushable conjuncts of *where (over `table`'s columns) into the result; *where
// keeps the rest (null when nothing is left).
ScanPredicates pushDownPredicates(BoundExprPtr* where, const TableInfo& table);

// The rows both a and b select.
ScanPredicates intersectPredicates(ScanPredicates a, const ScanPredicates& b);

// Splits an AND tree into its conjuncts, and joins conjuncts back (null for none).
void splitConjuncts(BoundExprPtr e, std::vector<BoundExprPtr>* out);
BoundExprPtr joinConjuncts(std::vector<BoundExprPtr> conjuncts);

}  // namespace argus::query
