// Fault: one injected cause of slowness in a simulated job, with its onset, duration,
// severity and target; the ground truth the diagnosis is scored against. Kinds carry the
// names of the findings they should produce (docs/cli/simulate.md):
//
//   compute_straggler  one rank's GPU computes 1 + severity times slower (all its compute
//                      kernels, or those whose name contains `kernel`)
//   masked_straggler   the same, and its NCCL kernels too: every collective it joins runs
//                      at its pace, so its peers show low bandwidth and long waits
//   link_degradation   the network link between two hosts carries 1 / (1 + severity) of its
//                      bandwidth: the collectives and transfers that cross it slow down
//   pipeline_bubble    one pipeline stage computes 1 + severity times slower (every rank of
//                      it): the stages it feeds and drains idle longer between microbatches
//   jit_stall          one rank compiles new kernels: at the onset new signatures appear,
//                      and each step of the fault its GPU idles severity times its compute
//                      while its CPU stacks sit in the compiler
//
// Spec syntax: KIND:key=value,... with keys at (onset step, required), for (steps, default
// 50; 0 lasts to the end), severity, rank, stage, hosts (A-B, host indices), kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "simulate/cluster_layout.h"

namespace argus::simulate {

enum class FaultKind : uint8_t {
  kComputeStraggler,
  kMaskedStraggler,
  kLinkDegradation,
  kPipelineBubble,
  kJitStall,
};
inline constexpr int kFaultKindCount = 5;
const char* faultKindName(FaultKind kind);

struct Fault {
  FaultKind kind = FaultKind::kComputeStraggler;
  uint64_t from_step = 0;
  uint64_t steps = 50;  // 0: to the end of the run
  double severity = 0;
  std::optional<uint32_t> rank;                          // stragglers, jit_stall
  std::optional<uint32_t> stage;                         // pipeline_bubble
  std::optional<std::pair<uint32_t, uint32_t>> hosts;    // link_degradation, lower first
  std::string kernel;  // stragglers: only kernels whose name contains it

  bool activeAt(uint64_t step) const { return step >= from_step && (steps == 0 || step - from_step < steps); }
  // The default severity of each kind: a slowdown a person would want found.
  static double defaultSeverity(FaultKind kind);
};

// Parses a spec (see above). InvalidArgument names the bad part.
Result<Fault> parseFault(std::string_view spec);

// One fault of each kind, one after another over [first_step, last_step]: each kind in an
// equal slot, at its start, lasting half of it (a JIT stall 3 steps), default severities,
// targets left to resolveFault. What `argus demo`, `argus eval` and the benches inject.
std::vector<Fault> staggeredFaults(uint64_t first_step, uint64_t last_step);

// Fills the targets the spec left out (drawn from `seed`, so a run is reproducible) and
// checks the given ones against the layout: a rank, stage or host past the cluster, a link
// on one host, or a pipeline fault without a pipeline are InvalidArgument. A drawn link
// joins a host with the next one its data-parallel ring visits (or its pipeline peer's when
// the job is one replica), so that traffic crosses it.
Status resolveFault(Fault* fault, const ClusterLayout& layout, uint64_t seed);

}  // namespace argus::simulate
