#include "capture/name_rules.h"

#include <algorithm>
#include <cctype>

namespace argus::capture {

namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool equalAt(std::string_view name, size_t pos, std::string_view pattern, bool ignore_case) {
  if (pos + pattern.size() > name.size()) return false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char a = name[pos + i], b = pattern[i];
    if (ignore_case ? lower(a) != lower(b) : a != b) return false;
  }
  return true;
}

bool containsAt(std::string_view name, std::string_view pattern, bool ignore_case) {
  if (pattern.size() > name.size()) return false;
  for (size_t pos = 0; pos + pattern.size() <= name.size(); ++pos) {
    if (equalAt(name, pos, pattern, ignore_case)) return true;
  }
  return false;
}

}  // namespace

bool matches(MatchKind kind, bool ignore_case, std::string_view pattern, std::string_view name) {
  switch (kind) {
    case MatchKind::kExact: return name.size() == pattern.size() && equalAt(name, 0, pattern, ignore_case);
    case MatchKind::kPrefix: return equalAt(name, 0, pattern, ignore_case);
    case MatchKind::kContains: return containsAt(name, pattern, ignore_case);
  }
  return false;
}

const char* rangeClassName(RangeClass c) {
  switch (c) {
    case RangeClass::kNone: return "none";
    case RangeClass::kForward: return "forward";
    case RangeClass::kBackward: return "backward";
    case RangeClass::kOptimizer: return "optimizer";
    case RangeClass::kDataLoad: return "data_load";
    case RangeClass::kMicrobatch: return "microbatch";
    case RangeClass::kUser: return "user";
  }
  return "invalid";
}

NameRules NameRules::defaults() {
  using M = MatchKind;
  using R = RangeClass;
  using P = model::Phase;
  NameRules r;
  r.steps = {{"ProfilerStep#"}, {"argus:step"}};
  r.ranges = {
      // Argus's own NVTX names, exact.
      {M::kExact, false, "argus:forward", R::kForward},
      {M::kExact, false, "argus:backward", R::kBackward},
      {M::kExact, false, "argus:optimizer", R::kOptimizer},
      {M::kExact, false, "argus:data", R::kDataLoad},
      {M::kPrefix, false, "argus:microbatch", R::kMicrobatch},
      // PyTorch profiler.
      {M::kPrefix, false, "enumerate(DataLoader)", R::kDataLoad},
      {M::kPrefix, false, "Optimizer.step#", R::kOptimizer},
      {M::kPrefix, false, "Optimizer.zero_grad#", R::kOptimizer},
      {M::kPrefix, false, "autograd::engine::evaluate_function", R::kBackward},
      {M::kContains, false, "Backward", R::kBackward},  // MulBackward0, ... (autograd nodes)
      // NVTX / Megatron-style phase names ("forward-compute", "backward-compute",
      // "optimizer"); microbatch ranges ("microbatch 3").
      {M::kContains, true, "microbatch", R::kMicrobatch},
      {M::kPrefix, true, "forward", R::kForward},
      {M::kPrefix, true, "backward", R::kBackward},
      {M::kPrefix, true, "optimizer", R::kOptimizer},
      {M::kPrefix, true, "data_load", R::kDataLoad},
      {M::kPrefix, true, "dataloader", R::kDataLoad},
  };
  r.kernels = {
      {M::kContains, true, "nccl", P::kCommunication},
      {M::kContains, true, "multi_tensor_apply", P::kOptimizer},
      {M::kContains, true, "adam", P::kOptimizer},
      {M::kContains, true, "sgd", P::kOptimizer},
      {M::kContains, true, "optimizer", P::kOptimizer},
      {M::kContains, true, "backward", P::kBackward},
      {M::kContains, true, "bwd", P::kBackward},
      {M::kContains, true, "grad", P::kBackward},
  };
  // CPU ranges around collectives: NCCL/Gloo/c10d names, the collective op names the
  // kernel rules and import/chrome_mapping know (every spelling), Megatron's pipeline
  // "-send" / "-recv". Not bare "broadcast" or "barrier": aten::broadcast_tensors is compute.
  for (const char* p : {"nccl", "gloo:", "c10d::", "allreduce", "all_reduce", "all-reduce", "allgather", "all_gather",
                        "all-gather", "reducescatter", "reduce_scatter", "reduce-scatter", "alltoall", "all_to_all",
                        "all-to-all", "sendrecv", "send_recv", "-send", "-recv"}) {
    r.comm_ranges.push_back({M::kContains, true, p});
  }
  r.kernel_default = P::kForward;
  return r;
}

std::optional<int64_t> NameRules::stepMarker(std::string_view name) const {
  for (const StepMarkerRule& rule : steps) {
    if (rule.prefix.empty() || !matches(MatchKind::kPrefix, false, rule.prefix, name)) continue;
    std::string_view rest = name.substr(rule.prefix.size());
    if (rest.empty()) return -1;
    if (rest.front() == '#') rest.remove_prefix(1);
    if (rest.empty() || rest.size() > 18) continue;  // 18 digits fit int64 without overflow
    if (!std::all_of(rest.begin(), rest.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    int64_t n = 0;
    for (char c : rest) n = n * 10 + (c - '0');
    return n;
  }
  return std::nullopt;
}

RangeClass NameRules::classifyRange(std::string_view name) const {
  for (const RangeRule& rule : ranges) {
    if (matches(rule.match, rule.ignore_case, rule.pattern, name)) return rule.cls;
  }
  return RangeClass::kNone;
}

bool NameRules::isCommRange(std::string_view name) const {
  return std::any_of(comm_ranges.begin(), comm_ranges.end(),
                     [&](const CommRangeRule& rule) { return matches(rule.match, rule.ignore_case, rule.pattern, name); });
}

KernelClass NameRules::classifyKernel(std::string_view name) const {
  for (const KernelRule& rule : kernels) {
    if (matches(rule.match, rule.ignore_case, rule.pattern, name)) return kernelClassOf(rule.phase, name);
  }
  return kernelClassOf(kernel_default, name);
}

KernelClass kernelClassOf(model::Phase phase, std::string_view name) {
  KernelClass k;
  k.phase = phase;
  if (phase == model::Phase::kCommunication) {
    k.communication = true;
    k.op = collectiveOpFromName(name);
  }
  return k;
}

model::CollectiveOp collectiveOpFromName(std::string_view name) {
  using Op = model::CollectiveOp;
  // Longer names first: "AllReduce" and "ReduceScatter" contain "Reduce", "SendRecv" "Send".
  static constexpr std::pair<std::string_view, Op> kOps[] = {
      {"allreduce", Op::kAllReduce},   {"reducescatter", Op::kReduceScatter}, {"allgather", Op::kAllGather},
      {"alltoall", Op::kAllToAll},     {"sendrecv", Op::kSendRecv},           {"broadcast", Op::kBroadcast},
      {"reduce", Op::kReduce},         {"send", Op::kSend},                   {"recv", Op::kRecv},
      {"barrier", Op::kBarrier},
  };
  for (const auto& [pattern, op] : kOps) {
    if (containsAt(name, pattern, true)) return op;
  }
  return Op::kOther;
}

}  // namespace argus::capture
