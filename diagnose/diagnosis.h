// The progressive diagnosis (DESIGN §7): anomalous windows of the job's step time (stage
// 1, diagnose/change_detector.h), then in each window the ranks, stages, links and stalls
// to blame (stage 2, window_analysis.h), then the kernels of each straggler (stage 3,
// kernel_analysis.h). The query engine exposes each stage as a table function
// (anomaly_windows, stragglers, degraded_kernels, diagnose; docs/query/diagnosis.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "diagnose/change_detector.h"
#include "diagnose/finding.h"
#include "diagnose/job_reader.h"
#include "diagnose/kernel_analysis.h"
#include "diagnose/window_analysis.h"

namespace argus::diagnose {

// The per-step series (max over ranks) whose windows stage 1 looks for, the step time first.
inline const std::vector<std::string> kDetectedSeries = {"iter_ns", "compute_ns", "comm_transfer_ns"};

struct DiagnoseOptions {
  DetectorOptions detector;
  WindowOptions window;
  uint32_t baseline_steps = 50;  // steps before a window that it is compared with
  // A straggler's kernel slowed by this many times the median of its other kernels (and by
  // compute_excess more), holding at least `kernel_share` of the time lost, is a degraded
  // kernel finding of its own.
  double kernel_concentration = 1.5;
  double kernel_share = 0.3;
};

// Stage 1 over [from, to]: `metric` (a steps column) per step, max over ranks or of `rank`.
// `series` (may be null) gets the series the detector saw.
Result<std::vector<AnomalyWindow>> findAnomalyWindows(const JobReader& reader, uint64_t from, uint64_t to, const std::string& metric,
                                                      std::optional<uint32_t> rank, const DetectorOptions& options,
                                                      std::vector<StepPoint>* series = nullptr);

// Windows in step order, those that overlap or touch joined (the first one's baseline,
// slowdown and strength kept): one incident that several series show. Windows apart are
// apart incidents: a series' detector has closed its window after steps back to normal, and
// a fault a few steps after another (a slow link after a straggler recovers, which another
// series shows) is compared with the steps before it, not diluted into one long window.
std::vector<AnomalyWindow> mergeWindows(std::vector<AnomalyWindow> windows);

// The baseline of a window from `from_step`: up to `steps` steps before it, past the
// job's warm-up (`warmup` steps from `first_step`) and after the end of any earlier window
// in `windows`, each when at least 5 steps are left. Nullopt when no step is before it.
std::optional<StepWindow> baselineFor(uint64_t from_step, uint64_t to_step, uint64_t first_step, uint32_t steps, uint64_t warmup,
                                      const std::vector<AnomalyWindow>& windows);

// Stages 2 and 3 for one window of `windows` (all of them, for baselines) in a job whose
// steps start at `first_step`: its findings, most confident first, or one `unexplained`.
Result<std::vector<Finding>> diagnoseWindow(const JobReader& reader, const std::vector<model::RankTopology>& topology, const AnomalyWindow& window,
                                            uint64_t first_step, const std::vector<AnomalyWindow>& windows, const DiagnoseOptions& options = {});

// diagnoseWindow for each of `which`, in its order; the windows' reads are shared.
Result<std::vector<std::vector<Finding>>> diagnoseWindows(const JobReader& reader, const std::vector<model::RankTopology>& topology,
                                                          const std::vector<AnomalyWindow>& which, uint64_t first_step,
                                                          const std::vector<AnomalyWindow>& windows, const DiagnoseOptions& options = {});

// All stages over [from, to]: the findings of every anomalous window (of the job's step
// time, or of its slowest rank's compute), by window then confidence; a window nothing
// explains yields one `unexplained` finding.
Result<std::vector<Finding>> diagnose(const JobReader& reader, uint64_t from, uint64_t to, const DiagnoseOptions& options = {});

}  // namespace argus::diagnose
