// NameClassifier (the compiled, one-pass form the assembler uses) gives NameRules' answers:
// the same rule, first match wins, on names built to hit every edge of the 16-byte scan.
#include "capture/name_classifier.h"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

using namespace argus::capture;
using argus::model::Phase;

namespace {

void checkSame(const NameRules& rules, const std::string& name) {
  NameClassifier c(rules);
  CAPTURE(name);
  CHECK(c.classifyRange(name) == rules.classifyRange(name));
  KernelClass a = c.classifyKernel(name), b = rules.classifyKernel(name);
  CHECK(a.phase == b.phase);
  CHECK(a.communication == b.communication);
  CHECK(a.op == b.op);
  CHECK(c.stepMarker(name) == rules.stepMarker(name));
}

// Names over an alphabet rich in the default patterns' bytes, in both cases, with the
// patterns themselves planted at every offset around the 16-byte blocks.
std::vector<std::string> hostileNames() {
  std::vector<std::string> out = {"", "n", "nc", "NCCL", "ncc", "xnccl", "Backward", "backward", "BACKWARD", "MulBackward0",
                                  "microbatch", "MicroBatch 3", "argus:step#7", "ProfilerStep#12", "forward-compute"};
  const std::string alphabet = "ncclNCCLbwdBWDgradGRADadamsgdoptimizerbackwardmicro_ :<>()0123456789";
  const char* planted[] = {"nccl", "NcCl", "adam", "bwd", "grad", "optimizer", "backward", "Backward", "microbatch", "multi_tensor_apply", "sgd"};
  std::mt19937 rng(7);
  for (int len = 0; len <= 70; ++len) {
    for (int rep = 0; rep < 6; ++rep) {
      std::string s;
      for (int i = 0; i < len; ++i) s += alphabet[rng() % alphabet.size()];
      out.push_back(s);
    }
  }
  for (const char* p : planted) {
    for (size_t at = 0; at < 40; ++at) {
      std::string s(at, 'x');
      s += p;
      out.push_back(s);
      out.push_back(s + std::string(at % 19, 'y'));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("default rules: the classifier agrees with NameRules on hostile names") {
  NameRules rules = NameRules::defaults();
  for (const std::string& name : hostileNames()) checkSame(rules, name);
}

TEST_CASE("custom rules: one-byte, empty, case-sensitive, prefix and exact patterns, and more than 64 rules") {
  NameRules rules;
  rules.steps = {{"step"}};
  rules.ranges = {{MatchKind::kContains, false, "Zz", RangeClass::kUser},
                  {MatchKind::kExact, true, "FWD", RangeClass::kForward},
                  {MatchKind::kContains, true, "q", RangeClass::kBackward},
                  {MatchKind::kPrefix, true, "opt", RangeClass::kOptimizer}};
  rules.kernels = {{MatchKind::kPrefix, false, "Gemm", Phase::kForward},
                   {MatchKind::kContains, true, "~x", Phase::kOptimizer},
                   {MatchKind::kContains, false, "nccl", Phase::kCommunication},
                   {MatchKind::kContains, true, "", Phase::kBackward}};
  for (const std::string& name : hostileNames()) checkSame(rules, name);
  for (const char* name : {"aZzb", "azzb", "fwd", "FWD", "xQx", "Optimizer", "Gemm_1", "gemm_1", "a~X", "ncclK", "NCCLK"}) checkSame(rules, name);

  NameRules many;
  for (int i = 0; i < 70; ++i) many.kernels.push_back({MatchKind::kContains, true, "k" + std::to_string(i) + "_", Phase::kBackward});
  many.kernels.push_back({MatchKind::kContains, true, "nccl", Phase::kCommunication});
  for (const char* name : {"k3_", "xxk69_", "k70_", "ncclAllReduce", "k65_nccl", "none"}) checkSame(many, name);
}
