// ScanPredicates: what a scan is restricted to (job, ranks, step range): a store table's,
// a table function's, or a metadata table's (jobs, ranks, kernel_names: job and rank).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace argus::query {

// From WHERE conjuncts on job, rank and step (planner/pushdown.h) or a table function's
// arguments.
struct ScanPredicates {
  bool jobs_restricted = false;
  std::vector<std::string> jobs;  // when restricted; sorted, unique
  bool ranks_restricted = false;
  std::vector<uint32_t> ranks;    // when restricted; sorted, unique
  uint64_t from_step = 0;         // [from_step, to_step)
  uint64_t to_step = UINT64_MAX;
  // True when no row can match (an empty job or rank set, an empty step range).
  bool contradiction() const {
    return (jobs_restricted && jobs.empty()) || (ranks_restricted && ranks.empty()) || from_step >= to_step;
  }
  bool selectsJob(std::string_view job) const;
  bool selectsRank(uint32_t rank) const;
};

// "jobs=['a', 'b']", then " ranks=all" and " steps=[from, to)" when asked: for EXPLAIN.
std::string describePredicates(const ScanPredicates& p, bool with_ranks, bool with_steps);

}  // namespace argus::query
