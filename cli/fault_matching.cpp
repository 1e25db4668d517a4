#include "cli/fault_matching.h"

#include <algorithm>

#include "simulate/cluster_layout.h"

namespace argus::cli {

using diagnose::Finding;
using diagnose::FindingKind;

namespace {

uint64_t faultEnd(const simulate::Fault& f, uint64_t last_step) { return f.steps == 0 ? last_step : std::min(last_step, f.from_step + f.steps - 1); }

bool overlaps(const Finding& x, const simulate::Fault& f, uint64_t last_step) { return x.from_step <= faultEnd(f, last_step) && x.to_step >= f.from_step; }

bool places(const Finding& x, const simulate::Fault& f) {
  if (f.rank) return x.ranks == std::vector<uint32_t>{*f.rank};
  if (f.stage) return x.pp_rank == f.stage;
  if (f.hosts) return x.link == simulate::ClusterLayout::hostName(f.hosts->first) + "/" + simulate::ClusterLayout::hostName(f.hosts->second);
  return false;
}

}  // namespace

FindingKind expectedKind(simulate::FaultKind kind) {
  switch (kind) {
    case simulate::FaultKind::kComputeStraggler: return FindingKind::kComputeStraggler;
    case simulate::FaultKind::kMaskedStraggler: return FindingKind::kMaskedStraggler;
    case simulate::FaultKind::kLinkDegradation: return FindingKind::kLinkDegradation;
    case simulate::FaultKind::kPipelineBubble: return FindingKind::kPipelineBubble;
    case simulate::FaultKind::kJitStall: return FindingKind::kJitStall;
  }
  return FindingKind::kUnexplained;
}

FaultMatch matchFault(const simulate::Fault& fault, uint64_t last_step, const std::vector<Finding>& findings) {
  FaultMatch m;
  for (const Finding& x : findings) {
    if (x.kind != expectedKind(fault.kind) || !overlaps(x, fault, last_step)) continue;
    const bool placed = places(x, fault);
    if (m.finding == nullptr || (placed && !m.localized)) {
      m.finding = &x;
      m.localized = placed;
      m.latency_steps = static_cast<int64_t>(x.from_step) - static_cast<int64_t>(fault.from_step);
    }
  }
  return m;
}

bool explainsSome(const Finding& x, const std::vector<simulate::Fault>& faults, uint64_t last_step) {
  for (const simulate::Fault& f : faults) {
    if (!overlaps(x, f, last_step)) continue;
    if (x.kind == expectedKind(f.kind)) return true;
    const bool straggler = f.kind == simulate::FaultKind::kComputeStraggler || f.kind == simulate::FaultKind::kMaskedStraggler;
    if (x.kind == FindingKind::kDegradedKernel && straggler) return true;
  }
  return false;
}

}  // namespace argus::cli
