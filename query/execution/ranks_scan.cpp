#include "query/execution/ranks_scan.h"

#include <algorithm>

#include "query/binder/catalog.h"
#include "query/common/errors.h"

namespace argus::query {

RanksScan::RanksScan(QueryContext& ctx, const storage::Store& store, std::vector<size_t> column_ids)
    : PhysicalOperator(ctx), store_(store), column_ids_(std::move(column_ids)) {
  const TableInfo& t = *findTable("ranks");
  for (size_t id : column_ids_) {
    names.push_back(t.columns[id].name);
    types.push_back(t.columns[id].type);
  }
}

bool RanksScan::loadNextJob() {
  if (!listed_) {
    listed_ = true;
    for (const storage::JobInfo& j : store_.listJobs()) jobs_.push_back(j.name);
    std::sort(jobs_.begin(), jobs_.end());
  }
  while (job_ix_ < jobs_.size()) {
    ctx_.check();
    auto topology = store_.topology(jobs_[job_ix_++]);
    if (!topology.isOk()) {
      // A job dropped since the listing has no ranks; anything else is the store failing.
      if (topology.status().isNotFound()) continue;
      throw ExecutionError("reading the topology of job '" + jobs_[job_ix_ - 1] + "': " + topology.status().toString());
    }
    ranks_ = std::move(*topology);
    std::sort(ranks_.begin(), ranks_.end(), [](const model::RankTopology& a, const model::RankTopology& b) { return a.rank < b.rank; });
    rank_ix_ = 0;
    if (!ranks_.empty()) return true;
  }
  return false;
}

bool RanksScan::next(DataChunk& out) {
  ctx_.check();
  if (rank_ix_ >= ranks_.size() && !loadNextJob()) return false;
  const size_t n = std::min(kVectorSize, ranks_.size() - rank_ix_);
  const std::string& job = jobs_[job_ix_ - 1];
  out.reset(column_ids_.size());
  out.rows = n;
  for (size_t j = 0; j < column_ids_.size(); ++j) {
    Vector& v = out.columns[j];
    v.reset(types[j], n);
    for (size_t i = 0; i < n; ++i) {
      const model::RankTopology& r = ranks_[rank_ix_ + i];
      const uint32_t numbers[] = {r.rank,    r.world_size, 0,         r.local_rank, r.device,  r.tp_rank, r.tp_size, r.pp_rank,
                                  r.pp_size, r.dp_rank,    r.dp_size, r.cp_rank,    r.cp_size, r.ep_rank, r.ep_size};
      switch (column_ids_[j]) {
        case 0: v.str[i] = job; break;
        case 3: v.str[i] = r.host; break;
        default: v.i64[i] = numbers[column_ids_[j] - 1]; break;
      }
    }
  }
  rank_ix_ += n;
  ctx_.stats().rows_scanned += n;
  return true;
}

}  // namespace argus::query
