// ClusterSimulator: a whole training job, step by step: every rank's StepRecord as a
// capture shim would report it, with injected faults (simulate/fault.h) whose effects spread
// the way they do in a real job. `argus simulate` drives it (docs/cli/simulate.md).
//
// The model, per step:
// - Each rank's kernels come from a KernelMix (a real trace's steps): forward and backward
//   kernels once per microbatch, the rest once per step, scaled by the rank's speed (a
//   static spread between GPUs, per-step jitter, warm-up, faults).
// - A tensor-parallel group synchronizes every layer: it runs each microbatch at its slowest
//   member's pace plus an all-reduce over its ring; the faster members wait in it.
// - The stages of each data-parallel replica run a 1F1B pipeline schedule; activations and
//   gradients cross between stages as point-to-point transfers whose time is bytes over the
//   link's bandwidth. Idle time between a stage's microbatches is its bubble.
// - Then each (tp, pp) coordinate all-reduces gradients over its data-parallel ring: it
//   starts when the last member arrives (the others wait) and moves at the ring's slowest
//   link. Then the optimizer. The step ends for every rank when the slowest rank is done.
// - Periodic checkpoints stall every rank; warm-up steps run slower.
// Deterministic: the same options and mix give the same records, in any order of calls.
//
//   ClusterSimulator sim = ...;
//   sim.simulate(64);                        // the next 64 steps of every rank
//   for (rank ...) for (i < 64 ...) sim.record(rank, i, &rec);
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "model/step_record.h"
#include "simulate/cluster_layout.h"
#include "simulate/fault.h"
#include "simulate/kernel_mix.h"

namespace argus::simulate {

struct ClusterOptions {
  ClusterLayout layout;
  uint32_t microbatches = 8;
  uint64_t seed = 1;
  int64_t start_ns = 1'700'000'000'000'000'000;  // epoch ns of step 0
  uint64_t warmup_steps = 10;      // steps run slower at the start (the first about 2x)
  uint64_t checkpoint_every = 0;   // 0: no checkpoints
  int64_t checkpoint_ns = 3'000'000'000;
  double rank_spread = 0.005;      // log-normal sigma of each GPU's static speed
  double step_jitter = 0.005;      // per rank and step
  double job_jitter = 0.003;       // per step, every rank alike
  // Communication: GB/s are bytes per ns.
  double nvlink_gbps = 150;        // inside a host
  double network_gbps = 25;        // between hosts (200 Gb/s)
  int64_t latency_ns = 20'000;     // per transfer or collective call
  uint64_t tp_bytes = 32u << 20;   // per microbatch, forward and backward each
  uint64_t pp_bytes = 16u << 20;   // activations (and gradients) per microbatch
  uint64_t dp_bytes = 512u << 20;  // gradients per rank per step
  std::vector<Fault> faults;       // resolved against the layout by create()
};

class ClusterSimulator {
 public:
  // InvalidArgument for a bad layout, microbatch count or fault (resolveFault) or an empty mix.
  static Result<std::unique_ptr<ClusterSimulator>> create(ClusterOptions options, KernelMix mix);
  ~ClusterSimulator();

  const ClusterOptions& options() const { return options_; }
  const ClusterLayout& layout() const { return options_.layout; }
  // The faults with their targets filled in: the ground truth.
  const std::vector<Fault>& faults() const { return options_.faults; }
  const KernelMix& mix() const { return mix_; }
  // The text behind every id the records use; every rank may send all of it.
  std::span<const model::KernelDictEntry> kernels() const { return kernels_; }
  std::span<const model::StackDictEntry> stacks() const { return stacks_; }
  std::span<const model::StringDictEntry> strings() const { return strings_; }

  // Simulates the next `steps` steps of every rank (they are coupled, so all at once),
  // replacing the block record() reads from. Memory: ~200 bytes per rank and step.
  void simulate(uint32_t steps);
  uint64_t blockFirstStep() const { return block_first_; }
  uint32_t blockSteps() const { return block_steps_; }
  uint64_t nextStep() const { return block_first_ + block_steps_; }

  // Rank `rank`'s record of step blockFirstStep() + i, canonical, into *out (its vectors
  // are reused). REQUIRES: rank < layout().ranks(), i < blockSteps(). Safe to call from
  // several threads at once.
  void record(uint32_t rank, uint32_t i, model::StepRecord* out) const;

 private:
  struct RankStep;
  struct StepTimes;
  struct Kernels;
  ClusterSimulator(ClusterOptions options, KernelMix mix);
  void computeRank(uint32_t rank, uint64_t step, RankStep* rs) const;
  void timeStep(uint64_t step, RankStep* ranks, StepTimes* times);

  ClusterOptions options_;
  KernelMix mix_;
  std::unique_ptr<Kernels> k_;  // what record() and computeRank() look up per kernel
  std::vector<model::KernelDictEntry> kernels_;
  std::vector<model::StackDictEntry> stacks_;
  std::vector<model::StringDictEntry> strings_;
  std::vector<double> rank_speed_;
  std::vector<RankStep> block_;  // step-major: block_[i * ranks + rank]
  std::vector<StepTimes> steps_;
  uint64_t block_first_ = 0;
  uint32_t block_steps_ = 0;
  int64_t clock_ns_ = 0;
};

}  // namespace argus::simulate
