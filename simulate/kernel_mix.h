// KernelMix: the kernels a simulated rank runs, taken from the steps of a real rank (a
// Kineto trace imported through the step assembler) or, without one, from SyntheticSteps.
//
// Each kept signature has one histogram per usable source step, so simulated steps show
// the source's own step-to-step variation; the simulator picks one per rank and step and
// scales it by shifting its bucket indices (a log-bucketed histogram scales by a shift:
// gamma^k per k buckets). Forward and backward kernels run once per microbatch, the rest
// once per step. Communication kernels are left out: the simulator models collectives
// (and their NCCL kernels) from bytes and bandwidth.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/step_record.h"

namespace argus::simulate {

struct MixKernel {
  model::KernelDictEntry entry;
  model::Phase phase = model::Phase::kUnknown;
  // variants[v]: the buckets of source step v (empty when the kernel did not run in it).
  std::vector<std::vector<model::DurationHistogram::Bucket>> variants;
  bool perMicrobatch() const { return phase == model::Phase::kForward || phase == model::Phase::kBackward; }
};

struct KernelMix {
  std::string source;  // the trace's path, or "built-in"
  std::vector<MixKernel> kernels;  // most time first
  size_t variants = 0;             // source steps used
  // Share of the source steps' non-communication kernel time the kept kernels hold.
  double coverage = 0;
};

// The mix from one rank's steps and its kernel dictionary: keeps the `max_kernels`
// signatures with the most time. Steps whose compute is past twice the median (warm-up,
// a profiler's first step) are not used. InvalidArgument when no step has compute kernels.
Result<KernelMix> kernelMixFromSteps(std::span<const model::StepRecord> steps, std::span<const model::KernelDictEntry> dictionary,
                                     size_t max_kernels, std::string source);

// The mix of a SyntheticSteps rank (plausible names, log-normal durations), for a machine
// without a trace to take one from.
KernelMix builtinKernelMix(size_t max_kernels);

}  // namespace argus::simulate
