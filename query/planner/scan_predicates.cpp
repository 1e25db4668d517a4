#include "query/planner/scan_predicates.h"

#include "base/consecutive_runs.h"
#include "query/common/value.h"

namespace argus::query {

std::string describePredicates(const ScanPredicates& p, bool with_ranks, bool with_steps) {
  auto list = [](bool restricted, const auto& items, auto text) {
    if (!restricted) return std::string("all");
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + text(items[i]);
    return out + "]";
  };
  std::string out = "jobs=" + list(p.jobs_restricted, p.jobs, [](const std::string& j) { return Value::varchar(j).toSql(); });
  if (with_ranks) {
    // Runs of three or more consecutive ranks as first-last (a pushed range is one run).
    std::vector<std::string> runs;
    forConsecutiveRuns(p.ranks, [&](uint32_t first, uint32_t last) {
      if (last - first >= 2) {
        runs.push_back(std::to_string(first) + "-" + std::to_string(last));
      } else {
        for (uint32_t r = first; r <= last; ++r) runs.push_back(std::to_string(r));
      }
    });
    out += " ranks=" + list(p.ranks_restricted, runs, [](const std::string& r) { return r; });
  }
  if (with_steps) {
    const std::string to = p.to_step == UINT64_MAX ? "inf" : std::to_string(p.to_step);
    out += " steps=[" + std::to_string(p.from_step) + ", " + to + ")";
  }
  return out;
}

bool ScanPredicates::selectsJob(std::string_view job) const {
  return !jobs_restricted || std::binary_search(jobs.begin(), jobs.end(), job);
}

bool ScanPredicates::selectsRank(uint32_t rank) const {
  return !ranks_restricted || std::binary_search(ranks.begin(), ranks.end(), rank);
}

}  // namespace argus::query
