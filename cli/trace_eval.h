// The diagnosis scored on real traces (`argus eval`, its "real traces" part): each folder of
// per-rank Kineto traces (rank-N.json.gz, one job's ranks) under the shared data is imported
// as a job as recorded, then once per rank and factor with that rank's compute kernels
// slowed by the factor (import/trace_slowdown.h), and each job is diagnosed with diagnose().
// A slowed job is localized when a straggler finding blames exactly the slowed rank.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace argus::cli {

struct TraceEvalOptions {
  std::string kineto_dir;  // its subfolders with at least two rank-N.json.gz files are used
  std::vector<double> factors = {1.1, 1.25, 1.5, 2.0};
  std::string work_dir;  // the jobs' store goes in a fresh folder under it
};

struct TraceEvalResult {
  bool ok = true;        // every folder read, imported and diagnosed
  size_t slowed = 0;     // jobs with a slowed rank
  size_t localized = 0;  // of them, the slowed rank blamed
  size_t misplaced = 0;  // findings of slowed jobs that blame another rank
  size_t clean_findings = 0;  // findings of the jobs as recorded
};

// Prints a table per folder to `out` (problems to stderr).
TraceEvalResult runTraceEval(const TraceEvalOptions& options, FILE* out);

}  // namespace argus::cli
