// The `jobs`, `ranks`, `kernel_names`, `stack_names` and `names` tables: small listings from
// the store's metadata (its job list, each job's topology and dictionaries), read whole when
// the plan is built and served by RowsSource. `p`: the WHERE conditions on job (and rank)
// the planner pushed down; only the jobs (and ranks) they select are read.
#pragma once

#include <vector>

#include "query/execution/physical_operator.h"
#include "query/planner/scan_predicates.h"
#include "storage/store.h"

namespace argus::query {

// One row per job, in name order (JOBS_SCAN).
PhysicalOperatorPtr makeJobsScan(QueryContext& ctx, const storage::Store& store, const std::vector<size_t>& column_ids,
                                const ScanPredicates& p);
// One row per rank of each job's topology, jobs in name order, ranks ascending (RANKS_SCAN).
PhysicalOperatorPtr makeRanksScan(QueryContext& ctx, const storage::Store& store, const std::vector<size_t>& column_ids,
                                const ScanPredicates& p);
// One row per kernel dictionary entry of each job, jobs in name order, signatures ascending
// (KERNEL_NAMES_SCAN).
PhysicalOperatorPtr makeKernelNamesScan(QueryContext& ctx, const storage::Store& store, const std::vector<size_t>& column_ids,
                                        const ScanPredicates& p);
// One row per stack dictionary entry of each job, stack ids ascending (STACK_NAMES_SCAN).
PhysicalOperatorPtr makeStackNamesScan(QueryContext& ctx, const storage::Store& store, const std::vector<size_t>& column_ids,
                                       const ScanPredicates& p);
// One row per string dictionary entry of each job, ids ascending (NAMES_SCAN).
PhysicalOperatorPtr makeNamesScan(QueryContext& ctx, const storage::Store& store, const std::vector<size_t>& column_ids,
                                  const ScanPredicates& p);

}  // namespace argus::query
