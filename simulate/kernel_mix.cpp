#include "simulate/kernel_mix.h"

#include <algorithm>
#include <unordered_map>

#include "simulate/synthetic_steps.h"

namespace argus::simulate {

using model::Phase;

namespace {

int64_t computeNs(const model::StepRecord& r) {
  int64_t ns = 0;
  for (const model::KernelStat& k : r.kernels) {
    if (k.phase != Phase::kCommunication) ns += k.total_ns;
  }
  return ns;
}

}  // namespace

Result<KernelMix> kernelMixFromSteps(std::span<const model::StepRecord> steps, std::span<const model::KernelDictEntry> dictionary,
                                     size_t max_kernels, std::string source) {
  std::vector<int64_t> compute;
  for (const model::StepRecord& r : steps) {
    if (int64_t ns = computeNs(r); ns > 0) compute.push_back(ns);
  }
  if (compute.empty()) return Status::invalidArgument(source + ": no step with compute kernels to take a kernel mix from");
  std::nth_element(compute.begin(), compute.begin() + compute.size() / 2, compute.end());
  const int64_t limit = 2 * compute[compute.size() / 2];
  std::vector<const model::StepRecord*> used;
  for (const model::StepRecord& r : steps) {
    if (int64_t ns = computeNs(r); ns > 0 && ns <= limit) used.push_back(&r);
  }

  // Time per (signature, phase) over the used steps, to rank them.
  struct Seen {
    model::Phase phase;
    uint64_t signature;
    int64_t ns = 0;
  };
  std::unordered_map<uint64_t, size_t> at;  // key: signature ^ phase
  std::vector<Seen> seen;
  int64_t all_ns = 0;
  for (const model::StepRecord* r : used) {
    for (const model::KernelStat& k : r->kernels) {
      if (k.phase == Phase::kCommunication || k.hist.empty()) continue;
      uint64_t key = k.signature ^ (static_cast<uint64_t>(k.phase) << 56);
      auto [it, fresh] = at.try_emplace(key, seen.size());
      if (fresh) seen.push_back(Seen{k.phase, k.signature});
      seen[it->second].ns += k.total_ns;
      all_ns += k.total_ns;
    }
  }
  std::stable_sort(seen.begin(), seen.end(), [](const Seen& a, const Seen& b) { return a.ns > b.ns; });
  if (seen.size() > max_kernels) seen.resize(max_kernels);

  std::unordered_map<uint64_t, const model::KernelDictEntry*> names;
  for (const model::KernelDictEntry& e : dictionary) names.emplace(e.signature, &e);
  KernelMix mix;
  mix.source = std::move(source);
  mix.variants = used.size();
  int64_t kept_ns = 0;
  for (const Seen& s : seen) {
    MixKernel k;
    auto name = names.find(s.signature);
    k.entry = name != names.end() ? *name->second : model::KernelDictEntry{s.signature, "kernel_" + std::to_string(s.signature), {}};
    k.phase = s.phase;
    for (const model::StepRecord* r : used) {
      auto it = std::find_if(r->kernels.begin(), r->kernels.end(), [&](const model::KernelStat& ks) { return ks.signature == s.signature && ks.phase == s.phase; });
      k.variants.push_back(it == r->kernels.end() ? std::vector<model::DurationHistogram::Bucket>{} : it->hist.buckets());
    }
    kept_ns += s.ns;
    mix.kernels.push_back(std::move(k));
  }
  mix.coverage = all_ns > 0 ? static_cast<double>(kept_ns) / static_cast<double>(all_ns) : 0;
  return mix;
}

KernelMix builtinKernelMix(size_t max_kernels) {
  SyntheticOptions o;
  o.signatures = static_cast<int>(std::max<size_t>(max_kernels, 1));
  o.recompile_rate = 0;
  SyntheticSteps gen(0, o);
  std::vector<model::StepRecord> steps;
  for (int i = 0; i < 4; ++i) steps.push_back(gen.next());
  Result<KernelMix> mix = kernelMixFromSteps(steps, gen.dictionary().kernels, max_kernels, "built-in");
  return std::move(mix).value();  // SyntheticSteps always runs compute kernels
}

}  // namespace argus::simulate
