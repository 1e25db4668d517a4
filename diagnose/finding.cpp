#include "diagnose/finding.h"

namespace argus::diagnose {

const char* findingKindName(FindingKind kind) {
  switch (kind) {
    case FindingKind::kComputeStraggler: return "compute_straggler";
    case FindingKind::kMaskedStraggler: return "masked_straggler";
    case FindingKind::kLinkDegradation: return "link_degradation";
    case FindingKind::kPipelineBubble: return "pipeline_bubble";
    case FindingKind::kJitStall: return "jit_stall";
    case FindingKind::kDegradedKernel: return "degraded_kernel";
    case FindingKind::kUnexplained: return "unexplained";
  }
  return "unexplained";
}

std::string rankList(const std::vector<uint32_t>& ranks) {
  std::string out;
  for (uint32_t r : ranks) out += (out.empty() ? "" : ",") + std::to_string(r);
  return out;
}

std::string shortKernelName(const std::string& name) {
  std::string s = name.substr(0, name.find('('));
  if (s.rfind("void ", 0) == 0) s.erase(0, 5);
  if (s.size() > 80) s = s.substr(0, s.find('<')) + "<...>";
  return s.substr(0, 120);
}

}  // namespace argus::diagnose
