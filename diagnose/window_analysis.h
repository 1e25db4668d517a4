// analyzeWindow: the phase-level stage of the diagnosis (DESIGN §7 stage 2) for one window
// of steps, against a baseline window before it. Each rank is compared with its true peers
// (the ranks of its pipeline stage, which run the same layers) and with itself before:
//
// - compute_straggler: compute above its stage peers' median and above its own baseline.
//   Its peers then wait for it in every collective, so they show communication symptoms
//   while it shows the least waiting: compute is blamed, not the waiters.
// - masked_straggler: such a rank whose own collective transfers also slowed (its GPU runs
//   its NCCL kernels slowly too), so its rings look like a network problem.
// - pipeline_bubble: a whole stage computes slower than before while the other stages do
//   not: they idle between microbatches (their bubble grows), fed and drained by it.
// - link_degradation: transfer bandwidth (bytes over the time not spent waiting for a late
//   peer) below the rank's own baseline with compute unchanged. Only the two ends of a slow
//   link see their own transfers slow; the rest of a ring waits. Point-to-point transfers
//   name their peer; ring collectives pair the flagged hosts of one communicator.
// - jit_stall: new kernel signatures or recompiles in the window, GPU idle grown, and CPU
//   stack samples in a compiler.
//
// A window without a baseline (StepWindow::peers_only) judges compute stragglers alone: a
// rank whose compute kernels run slower per call than the same kernels on its stage peers.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "diagnose/finding.h"
#include "diagnose/job_reader.h"

namespace argus::diagnose {

struct WindowOptions {
  double compute_excess = 0.05;  // over the stage peers' median and over the own baseline
  double bandwidth_drop = 0.15;  // transfer bandwidth below the own baseline
  // A rank's collectives are read only where its transfer time per step (comm_transfer_ns)
  // grew by this much, or its compute grew: a slowed link shows in the transfers of the ranks
  // whose traffic crosses it. A bandwidth_drop in a collective holding less than
  // transfer_screen * (1 - bandwidth_drop) / bandwidth_drop (6%) of the rank's transfer time
  // goes unseen.
  double transfer_screen = 0.01;
  double idle_growth = 0.05;     // JIT: GPU idle grown by this share of the baseline step
  uint32_t max_stragglers = 16;  // per window; more is a stage or the whole job
};

// Findings of the window, most confident first. `topology` lists the job's ranks.
Result<std::vector<Finding>> analyzeWindow(const JobReader& reader, const std::vector<model::RankTopology>& topology, const StepWindow& window,
                                           const WindowOptions& options = {});
// The findings of each of `windows`, in their order: as analyzeWindow, with each read
// serving several windows (a job's windows share chunks).
Result<std::vector<std::vector<Finding>>> analyzeWindows(const JobReader& reader, const std::vector<model::RankTopology>& topology,
                                                         const std::vector<StepWindow>& windows, const WindowOptions& options = {});

}  // namespace argus::diagnose
