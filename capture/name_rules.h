// NameRules: the one table that turns names into meaning (docs/capture/step-assembler.md,
// "Name rules"): which CPU ranges are steps, phases, data loading or microbatches, and
// which kernels are communication, optimizer or backward work when no range says so.
//
// Rules are tried in order; the first match wins. Matching is on the raw name (no
// normalization); `ignore_case` folds ASCII only. Classification runs once per distinct
// name (the assembler caches it by name id), never per event.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/step_record.h"

namespace argus::capture {

enum class MatchKind : uint8_t { kExact, kPrefix, kContains };

// What a CPU range (or mark) means to the assembler.
enum class RangeClass : uint8_t {
  kNone,        // ignored
  kForward,
  kBackward,
  kOptimizer,
  kDataLoad,    // counted in data_wait; kernels launched inside are data loading
  kMicrobatch,  // pipeline microbatch: the bubble is measured between these
  kUser,        // a configured user range: kernels launched inside get Phase::kOther
};
const char* rangeClassName(RangeClass c);

struct RangeRule {
  MatchKind match = MatchKind::kExact;
  bool ignore_case = false;
  std::string pattern;
  RangeClass cls = RangeClass::kNone;
};

struct KernelRule {
  MatchKind match = MatchKind::kContains;
  bool ignore_case = true;
  std::string pattern;
  model::Phase phase = model::Phase::kForward;  // kCommunication marks a collective kernel
};

// A CPU range around a collective ("nccl:AllReduce", PyTorch "c10d::allreduce_", Megatron
// "grads-reduce-scatter", "forward-send-backward-recv"). Matched apart from the range rules,
// so one range can be both: Megatron's "forward-send-forward-recv" stays a forward range for
// the kernels launched inside it and is communication time for a step without device work.
struct CommRangeRule {
  MatchKind match = MatchKind::kContains;
  bool ignore_case = true;
  std::string pattern;
};

// A step marker: a range or mark whose name is `prefix`, optionally followed by the step
// number ("ProfilerStep#12", "argus:step", "argus:step#7"): digits, or '#' then digits.
struct StepMarkerRule {
  std::string prefix;
};

// How a kernel name classifies when no enclosing range decides.
struct KernelClass {
  model::Phase phase = model::Phase::kForward;
  bool communication = false;
  model::CollectiveOp op = model::CollectiveOp::kOther;  // when communication
};

struct NameRules {
  std::vector<StepMarkerRule> steps;
  std::vector<RangeRule> ranges;
  std::vector<KernelRule> kernels;
  std::vector<CommRangeRule> comm_ranges;  // any match: communication
  model::Phase kernel_default = model::Phase::kForward;

  // PyTorch profiler, NVTX-style and Megatron names (the table in the docs).
  static NameRules defaults();

  // Step number of a step marker: nullopt when `name` is not one; otherwise the number it
  // carries, or -1 when it carries none (steps are then counted).
  std::optional<int64_t> stepMarker(std::string_view name) const;
  RangeClass classifyRange(std::string_view name) const;
  // Whether a CPU range of this name waits in a collective (any comm_ranges rule matches).
  bool isCommRange(std::string_view name) const;
  KernelClass classifyKernel(std::string_view name) const;
};

// The class of a kernel whose name matched a rule of `phase` (or none: the default phase):
// kCommunication makes it a collective, with the operation its name says.
KernelClass kernelClassOf(model::Phase phase, std::string_view name);

// The collective operation named inside an NCCL kernel name ("ncclDevKernel_AllReduce_Sum_f32_RING_LL",
// "ncclKernel_SendRecv_..."), kOther when none is recognized. ASCII case-insensitive.
model::CollectiveOp collectiveOpFromName(std::string_view name);

// The phase kernels inside a range of class `c` get (kUnknown for kNone and kMicrobatch).
// Inline: the assembler asks once per buffered range.
inline model::Phase phaseOfRange(RangeClass c) {
  switch (c) {
    case RangeClass::kForward: return model::Phase::kForward;
    case RangeClass::kBackward: return model::Phase::kBackward;
    case RangeClass::kOptimizer: return model::Phase::kOptimizer;
    case RangeClass::kDataLoad: return model::Phase::kDataLoad;
    case RangeClass::kUser: return model::Phase::kOther;
    case RangeClass::kNone:
    case RangeClass::kMicrobatch: return model::Phase::kUnknown;
  }
  return model::Phase::kUnknown;
}

bool matches(MatchKind kind, bool ignore_case, std::string_view pattern, std::string_view name);

}  // namespace argus::capture
