// Scoring the diagnosis against a simulation's ground truth, as `argus demo` and `argus eval`
// do: is an injected fault found (a finding of its kind whose window overlaps the fault's),
// placed (the finding names its rank, stage or link), and how soon after its onset.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "diagnose/finding.h"
#include "simulate/fault.h"

namespace argus::cli {

struct FaultMatch {
  const diagnose::Finding* finding = nullptr;  // the best match: placed if any is, else the first found
  bool localized = false;
  int64_t latency_steps = 0;  // the finding's first step minus the fault's onset
};

// The finding kind a fault should produce.
diagnose::FindingKind expectedKind(simulate::FaultKind kind);

// `last_step`: the run's last step (a fault lasting to the end stops there).
FaultMatch matchFault(const simulate::Fault& fault, uint64_t last_step, const std::vector<diagnose::Finding>& findings);

// Whether a finding explains some fault: its kind's window overlaps, or it is the degraded
// kernel of a straggler fault it overlaps. Findings that explain none are false positives.
bool explainsSome(const diagnose::Finding& finding, const std::vector<simulate::Fault>& faults, uint64_t last_step);

}  // namespace argus::cli
