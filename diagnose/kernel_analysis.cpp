#include "diagnose/kernel_analysis.h"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace argus::diagnose {

namespace {

double perCall(const KernelSums& k) { return static_cast<double>(k.total_ns) / static_cast<double>(std::max<uint64_t>(k.count, 1)); }

}  // namespace

Result<std::vector<KernelChange>> analyzeKernels(const JobReader& reader, const std::vector<model::RankTopology>& topology, uint32_t rank,
                                                 const StepWindow& w, const KernelOptions& o) {
  const model::RankTopology* self = nullptr;
  for (const auto& t : topology) {
    if (t.rank == rank) self = &t;
  }
  if (self == nullptr) return Status::notFound("job " + reader.job() + " has no rank " + std::to_string(rank));
  // The nearest ranks of the same stage: the same layers, the same kernels.
  std::vector<uint32_t> peers;
  for (const auto& t : topology) {
    if (t.rank != rank && t.pp_rank == self->pp_rank) peers.push_back(t.rank);
  }
  std::sort(peers.begin(), peers.end(), [&](uint32_t a, uint32_t b) {
    return std::llabs(int64_t{a} - rank) < std::llabs(int64_t{b} - rank) || (std::llabs(int64_t{a} - rank) == std::llabs(int64_t{b} - rank) && a < b);
  });
  if (peers.size() > o.peers) peers.resize(o.peers);
  std::vector<uint32_t> now_ranks = peers;
  now_ranks.push_back(rank);
  std::sort(now_ranks.begin(), now_ranks.end());
  auto now = reader.kernels(now_ranks, w.from_step, w.to_step);
  if (!now.isOk()) return now.status();
  Result<std::map<uint32_t, std::map<uint64_t, KernelSums>>> before = std::map<uint32_t, std::map<uint64_t, KernelSums>>{};
  if (!w.peers_only) before = reader.kernels({rank}, w.base_from, w.base_to);
  if (!before.isOk()) return before.status();
  const double win_steps = static_cast<double>(w.to_step - w.from_step + 1), base_steps = static_cast<double>(w.base_to - w.base_from + 1);

  std::vector<KernelChange> out;
  const auto& mine = (*now)[rank];
  const auto& baseline = (*before)[rank];
  double lost_total = 0;
  for (const auto& [sig, k] : mine) {
    // Communication kernels run as long as the slowest peer makes them wait: stage 2 splits
    // their transfer from their waiting.
    if (k.phase == model::Phase::kCommunication) continue;
    KernelChange c;
    c.signature = sig;
    c.calls_per_step = static_cast<double>(k.count) / win_steps;
    c.ns_per_step = static_cast<double>(k.total_ns) / win_steps;
    c.p50_ns = k.hist.quantile(0.5);
    c.p99_ns = k.hist.quantile(0.99);
    auto b = baseline.find(sig);
    c.is_new = !w.peers_only && b == baseline.end();
    if (b != baseline.end()) {
      c.baseline_ns_per_step = static_cast<double>(b->second.total_ns) / base_steps;
      c.baseline_p50_ns = b->second.hist.quantile(0.5);
      c.baseline_p99_ns = b->second.hist.quantile(0.99);
      c.slowdown = perCall(b->second) > 0 ? perCall(k) / perCall(b->second) - 1 : 0;
    }
    std::vector<const KernelSums*> peer;
    for (uint32_t p : peers) {
      auto it = (*now)[p].find(sig);
      if (it != (*now)[p].end()) peer.push_back(&it->second);
    }
    if (!peer.empty()) {
      auto middle = [&](auto less) -> const KernelSums& {
        std::nth_element(peer.begin(), peer.begin() + static_cast<std::ptrdiff_t>(peer.size() / 2), peer.end(), less);
        return *peer[peer.size() / 2];
      };
      c.peers_ns_per_step = static_cast<double>(middle([](const KernelSums* x, const KernelSums* y) { return x->total_ns < y->total_ns; }).total_ns) / win_steps;
      if (w.peers_only) {
        // No baseline of its own: the peer with the median time per call stands in for it
        // (per call: a peer may call the kernel more often, with more work to do).
        const KernelSums& typical = middle([&](const KernelSums* x, const KernelSums* y) { return perCall(*x) < perCall(*y); });
        c.baseline_ns_per_step = perCall(typical) * static_cast<double>(k.count) / win_steps;  // its calls at the peer's speed
        c.baseline_p50_ns = typical.hist.quantile(0.5);
        c.baseline_p99_ns = typical.hist.quantile(0.99);
        c.slowdown = perCall(typical) > 0 ? perCall(k) / perCall(typical) - 1 : 0;
      }
    }
    c.lost_ns_per_step = c.ns_per_step - c.baseline_ns_per_step;
    if (c.lost_ns_per_step > 0) lost_total += c.lost_ns_per_step;
    out.push_back(std::move(c));
  }
  for (KernelChange& c : out) {
    c.share = lost_total > 0 && c.lost_ns_per_step > 0 ? c.lost_ns_per_step / lost_total : 0;
    Result<model::KernelDictEntry> name = reader.store().kernelName(reader.job(), c.signature);
    c.name = name.isOk() ? name->name : "";
  }
  std::sort(out.begin(), out.end(), [](const KernelChange& a, const KernelChange& b) {
    return a.lost_ns_per_step > b.lost_ns_per_step || (a.lost_ns_per_step == b.lost_ns_per_step && a.signature < b.signature);
  });
  return out;
}

}  // namespace argus::diagnose
