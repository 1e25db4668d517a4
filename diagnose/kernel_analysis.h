// analyzeKernels: the kernel-level stage of the diagnosis (DESIGN §7 stage 3). For one
// rank and window, each kernel signature's time per step against the rank's own baseline
// and against its stage peers in the same window, ranked by its share of the time lost.
// A signature absent from the baseline is new (a JIT compile, a changed shape). A
// peers-only window (no baseline) compares with the median stage peer instead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "diagnose/job_reader.h"
#include "diagnose/window_analysis.h"

namespace argus::diagnose {

struct KernelChange {
  uint64_t signature = 0;
  std::string name;
  double calls_per_step = 0;
  double ns_per_step = 0;           // in the window
  double baseline_ns_per_step = 0;  // the same rank before (peers-only: the median peer)
  double peers_ns_per_step = 0;     // median of the stage peers asked for, in the window (0: none)
  double p50_ns = 0, baseline_p50_ns = 0;
  double p99_ns = 0, baseline_p99_ns = 0;
  double slowdown = 0;      // mean duration per call over the baseline's, minus 1
  double lost_ns_per_step = 0;  // window minus baseline
  double share = 0;         // of the rank's time lost over all kernels that lost time
  bool is_new = false;
};

struct KernelOptions {
  uint32_t peers = 8;  // stage peers compared (the nearest ranks of the stage)
};

// Kernels of `rank`, the most time lost first. `topology` lists the job's ranks.
Result<std::vector<KernelChange>> analyzeKernels(const JobReader& reader, const std::vector<model::RankTopology>& topology, uint32_t rank,
                                                 const StepWindow& window, const KernelOptions& options = {});

}  // namespace argus::diagnose
