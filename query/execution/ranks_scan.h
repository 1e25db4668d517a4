// RanksScan: the `ranks` table, each job's topology as the capture sessions reported it (one
// row per rank: host, device, and its place in the TP x PP x DP x CP x EP layout), jobs in
// name order and ranks ascending. Small next to the step tables, so filters stay above it.
#pragma once

#include <string>
#include <vector>

#include "query/execution/physical_operator.h"
#include "storage/store.h"

namespace argus::query {

class RanksScan final : public PhysicalOperator {
 public:
  RanksScan(QueryContext& ctx, const storage::Store& store, std::vector<size_t> column_ids);
  bool next(DataChunk& chunk) override;
  std::string describe() const override { return "RANKS_SCAN"; }

 private:
  // Reads the next job's topology; false when no job is left.
  bool loadNextJob();

  const storage::Store& store_;
  std::vector<size_t> column_ids_;
  bool listed_ = false;
  std::vector<std::string> jobs_;
  size_t job_ix_ = 0;
  std::vector<model::RankTopology> ranks_;  // of jobs_[job_ix_ - 1]
  size_t rank_ix_ = 0;
};

}  // namespace argus::query
