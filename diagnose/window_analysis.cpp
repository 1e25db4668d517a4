#include "diagnose/window_analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "diagnose/median.h"

namespace argus::diagnose {

namespace {

std::string ms(double ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f ms", ns / 1e6);
  return b;
}
std::string pct(double ratio) {  // 1.29 -> "+29%"
  char b[32];
  std::snprintf(b, sizeof b, "%+.0f%%", (ratio - 1) * 100);
  return b;
}
std::string gbps(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f GB/s", v);
  return b;
}

// medianOf over a copy: the callers' vectors keep their order.
double median(std::vector<double> v) { return medianOf(v); }

// Frames that mean the training thread is compiling kernels.
bool compilerFrame(const std::string& frame) {
  for (const char* word : {"triton/compiler", "torch/_inductor", "torch/_dynamo", "nvrtc", "ptxas"}) {
    if (frame.find(word) != std::string::npos) return true;
  }
  return false;
}

constexpr uint32_t kMaxRank = 1u << 22;

// A rank the window judges: in the topology, with steps in the window and, unless peers
// alone judge it, a baseline with compute.
bool judged(const model::RankTopology* t, const RankPhases& win, const RankPhases& base, bool peers_only) {
  return t != nullptr && win.steps > 0 && (peers_only || (base.steps > 0 && base.compute > 0));
}
// A straggler against its baseline: compute above its stage's median and its own baseline.
bool straggles(const RankPhases& win, const RankPhases& base, double stage_median, const WindowOptions& o) {
  return win.compute > (1 + o.compute_excess) * stage_median && win.compute > (1 + o.compute_excess) * base.compute;
}

struct Analysis {
  const JobReader& reader;
  const std::vector<model::RankTopology>& topology;
  const StepWindow& w;
  const WindowOptions& o;
  uint32_t rank_count = 0;
  const std::vector<const model::RankTopology*>& by_rank;
  std::vector<RankPhases> win, base;
  std::vector<Finding> findings;

  Finding make(FindingKind kind) const {
    Finding f;
    f.kind = kind;
    f.from_step = w.from_step;
    f.to_step = w.to_step;
    return f;
  }
  bool present(uint32_t r) const { return judged(by_rank[r], win[r], base[r], w.peers_only); }
  // Compute against the own baseline; 1 (unknown) without one.
  double growth(uint32_t r) const { return w.peers_only ? 1 : win[r].compute / base[r].compute; }
};

// Ranks grouped by pipeline stage.
std::map<uint32_t, std::vector<uint32_t>> stages(const Analysis& a) {
  std::map<uint32_t, std::vector<uint32_t>> out;
  for (uint32_t r = 0; r < a.rank_count; ++r) {
    if (a.present(r)) out[a.by_rank[r]->pp_rank].push_back(r);
  }
  return out;
}

// Ranks a stage needs to be judged without a baseline: with two, neither is the normal one.
constexpr size_t kMinPeersAlone = 3;

// Per rank of `by_stage` (indexed by rank), how much longer its compute kernels took than
// the same calls would at its stage's median speed per call of each signature, minus 1;
// 0 in stages of fewer than kMinPeersAlone ranks.
Result<std::vector<double>> perCallExcess(const Analysis& a, const std::map<uint32_t, std::vector<uint32_t>>& by_stage) {
  Result<std::vector<std::vector<JobReader::KernelTime>>> times = a.reader.computeKernelTimes(a.w.from_step, a.w.to_step, a.rank_count);
  if (!times.isOk()) return times.status();
  std::vector<double> out(a.rank_count, 0);
  for (const auto& [k, ranks] : by_stage) {
    if (ranks.size() < kMinPeersAlone) continue;
    std::map<uint64_t, std::vector<double>> speeds;  // signature: ns per call on each rank
    for (uint32_t r : ranks) {
      for (const auto& t : (*times)[r]) {
        if (t.count > 0) speeds[t.signature].push_back(static_cast<double>(t.total_ns) / static_cast<double>(t.count));
      }
    }
    std::map<uint64_t, double> typical;
    for (auto& [sig, v] : speeds) typical[sig] = medianOf(v);
    for (uint32_t r : ranks) {
      double took = 0, at_typical = 0;
      for (const auto& t : (*times)[r]) {
        took += static_cast<double>(t.total_ns);
        at_typical += typical[t.signature] * static_cast<double>(t.count);
      }
      out[r] = at_typical > 0 ? took / at_typical - 1 : 0;
    }
  }
  return out;
}

// What the stages read for one window: its phases, collectives and JIT events.
struct WindowReads {
  RankPhasesPair phases;
  JobReader::CollectivesPair traffic;
  std::vector<JobReader::Event> jit_events;
};

Result<std::vector<Finding>> analyze(const JobReader& reader, const std::vector<model::RankTopology>& topology, const std::vector<const model::RankTopology*>& by_rank,
                                     const StepWindow& w, WindowReads& reads, const WindowOptions& o) {
  Analysis a{reader, topology, w, o, static_cast<uint32_t>(by_rank.size()), by_rank, std::move(reads.phases[1]), std::move(reads.phases[0]), {}};
  const auto by_stage = stages(a);

  // Stages: their compute now and before; a stage that slowed as a whole feeds the bubble.
  std::map<uint32_t, double> stage_now, stage_growth;
  std::set<uint32_t> slow_stages;
  for (const auto& [k, ranks] : by_stage) {
    std::vector<double> now, growths;
    for (uint32_t r : ranks) {
      now.push_back(a.win[r].compute);
      growths.push_back(a.growth(r));
    }
    stage_now[k] = median(now);
    stage_growth[k] = median(growths);
  }
  for (const auto& [k, g] : stage_growth) {
    double others = 1;
    std::vector<double> rest;
    for (const auto& [j, h] : stage_growth) {
      if (j != k) rest.push_back(h);
    }
    if (!rest.empty()) others = median(rest);
    if (w.peers_only || by_stage.size() < 2 || g < 1 + o.compute_excess || g - others < o.compute_excess) continue;
    slow_stages.insert(k);
    std::vector<double> bubble_now, bubble_before;
    for (const auto& [j, ranks] : by_stage) {
      if (j == k) continue;
      for (uint32_t r : ranks) {
        bubble_now.push_back(a.win[r].bubble);
        bubble_before.push_back(a.base[r].bubble);
      }
    }
    Finding f = a.make(FindingKind::kPipelineBubble);
    f.pp_rank = k;
    f.slowdown = g - 1;
    f.confidence = std::clamp(0.5 + (g - others - o.compute_excess) * 5, 0.5, 0.99);
    f.evidence = "stage " + std::to_string(k) + " (" + std::to_string(by_stage.at(k).size()) + " ranks) computes " + ms(stage_now[k]) + " per step, " +
                 pct(g) + " over its own baseline, while the other stages' compute moved " + pct(others) +
                 "; their pipeline bubble grew from " + ms(median(bubble_before)) + " to " + ms(median(bubble_now)) + " per step";
    a.findings.push_back(std::move(f));
  }

  // Collective transfer bandwidth against each rank's own baseline.
  const auto* cbase = &reads.traffic[0];
  const auto* cwin = &reads.traffic[1];
  struct SlowTransfer {
    uint32_t rank;
    CollectiveKey key;
    double now, before;  // GB/s
  };
  std::vector<SlowTransfer> slow;
  for (uint32_t r = 0; r < a.rank_count; ++r) {
    for (const auto& [key, now] : (*cwin)[r]) {
      const CollectiveSums* was = (*cbase)[r].find(key);
      if (was == nullptr || was->gbps() <= 0 || now.gbps() <= 0) continue;
      if (now.gbps() < (1 - o.bandwidth_drop) * was->gbps()) slow.push_back({r, key, now.gbps(), was->gbps()});
    }
  }

  // Compute stragglers, individually: above their stage's median and their own baseline.
  // Without a baseline: at least their stage's median compute, with their kernels slower per
  // call than the same kernels on their stage peers; computing longer alone may be more
  // work (an uneven shard), not a slower GPU.
  std::vector<double> per_call;
  if (w.peers_only) {
    Result<std::vector<double>> speed = perCallExcess(a, by_stage);
    if (!speed.isOk()) return speed.status();
    per_call = std::move(speed).value();
  }
  std::vector<uint32_t> stragglers;
  for (const auto& [k, ranks] : by_stage) {
    if (slow_stages.count(k) != 0) continue;
    for (uint32_t r : ranks) {
      const bool slow = w.peers_only ? per_call[r] >= o.compute_excess : straggles(a.win[r], a.base[r], stage_now[k], o);
      if (slow) stragglers.push_back(r);
    }
  }
  // The most slowed first: against their own baseline, or per call against their peers.
  auto slowed = [&](uint32_t r) { return w.peers_only ? per_call[r] : a.growth(r); };
  std::sort(stragglers.begin(), stragglers.end(), [&](uint32_t x, uint32_t y) { return slowed(x) > slowed(y); });
  if (stragglers.size() > o.max_stragglers) stragglers.resize(o.max_stragglers);
  std::set<uint64_t> straggler_comms;  // their rings: a slow transfer there is theirs, not a link's
  std::set<uint32_t> straggler_set(stragglers.begin(), stragglers.end());
  for (uint32_t r : stragglers) {
    const uint32_t k = a.by_rank[r]->pp_rank;
    std::vector<double> peer_wait;
    for (uint32_t p : by_stage.at(k)) {
      if (p != r) peer_wait.push_back(a.win[p].exposed);
    }
    // Its own transfers against its baseline, the slowest of its collectives: a slowed GPU
    // runs its NCCL kernels slowly too, by less than a link would (no bandwidth_drop bar).
    double own_now = 0, own_before = 0, own_ratio = 1;
    for (const auto& [key, now] : (*cwin)[r]) {
      const CollectiveSums* was = (*cbase)[r].find(key);
      if (was == nullptr || was->gbps() <= 0 || now.gbps() <= 0) continue;
      if (now.gbps() / was->gbps() < own_ratio) {
        own_ratio = now.gbps() / was->gbps();
        own_now = now.gbps();
        own_before = was->gbps();
      }
    }
    for (const auto& [key, sums] : (*cwin)[r]) straggler_comms.insert(key.communicator);
    const bool masked = own_ratio < 1 - o.compute_excess;
    Finding f = a.make(masked ? FindingKind::kMaskedStraggler : FindingKind::kComputeStraggler);
    f.ranks = {r};
    f.pp_rank = k;
    const double excess = a.win[r].compute / stage_now[k];
    f.slowdown = w.peers_only ? per_call[r] : excess - 1;
    f.confidence = std::clamp(0.6 + (f.slowdown - o.compute_excess) * 4, 0.6, 0.99);
    f.evidence = "rank " + std::to_string(r) + " (stage " + std::to_string(k) + ", " + a.by_rank[r]->host + ") computes " + ms(a.win[r].compute) +
                 " per step against " + ms(stage_now[k]) + " for the median of its " + std::to_string(by_stage.at(k).size() - 1) + " stage peers (" +
                 pct(excess) + ")" + (w.peers_only ? " (no earlier steps to compare with: peers alone)" : " and " + ms(a.base[r].compute) + " before step " + std::to_string(w.from_step)) +
                 "; it waits " + ms(a.win[r].exposed) +
                 " per step in collectives, its peers " + ms(median(peer_wait)) + ": they wait for it";
    if (w.peers_only) f.evidence += "; its compute kernels run " + pct(1 + per_call[r]) + " per call against the same kernels on its stage peers";
    if (masked) {
      f.evidence += "; its own transfers move " + gbps(own_now) + " against " + gbps(own_before) +
                    " before, so its rings look like a slow network, but its GPU is slow at compute too";
    }
    a.findings.push_back(std::move(f));
  }

  // Degraded links: slow transfers of ranks whose compute held, paired by host.
  std::map<std::pair<std::string, std::string>, std::vector<const SlowTransfer*>> links;
  std::map<uint64_t, std::vector<const SlowTransfer*>> by_comm;
  for (const SlowTransfer& s : slow) {
    if (straggler_set.count(s.rank) != 0 || straggler_comms.count(s.key.communicator) != 0 || !a.present(s.rank)) continue;
    if (a.growth(s.rank) > 1 + o.compute_excess) continue;
    if (s.key.peer != model::CollectiveStat::kNoPeer) {
      if (s.key.peer >= a.rank_count || a.by_rank[s.key.peer] == nullptr || straggler_set.count(s.key.peer) != 0) continue;
      std::string x = a.by_rank[s.rank]->host, y = a.by_rank[s.key.peer]->host;
      if (x == y) continue;
      links[{std::min(x, y), std::max(x, y)}].push_back(&s);
    } else {
      by_comm[s.key.communicator].push_back(&s);
    }
  }
  for (const auto& [comm, list] : by_comm) {
    std::map<std::string, size_t> hosts;
    for (const SlowTransfer* s : list) ++hosts[a.by_rank[s->rank]->host];
    if (hosts.size() != 2) continue;  // a ring's slow link has two ends
    auto it = hosts.begin();
    const std::string x = it->first, y = std::next(it)->first;
    for (const SlowTransfer* s : list) links[{x, y}].push_back(s);
  }
  for (const auto& [pair, list] : links) {
    std::set<uint32_t> ranks;
    double now = 0, before = 0;
    for (const SlowTransfer* s : list) {
      ranks.insert(s->rank);
      now += s->now;
      before += s->before;
    }
    std::vector<double> growths;
    for (uint32_t r : ranks) growths.push_back(a.growth(r));
    Finding f = a.make(FindingKind::kLinkDegradation);
    f.link = pair.first + "/" + pair.second;
    f.ranks.assign(ranks.begin(), ranks.end());
    f.slowdown = before / now - 1;
    f.confidence = std::clamp(0.5 + 0.1 * static_cast<double>(list.size()), 0.5, 0.99);
    f.evidence = std::to_string(list.size()) + " transfers of " + std::to_string(ranks.size()) + " ranks across " + f.link + " move " +
                 gbps(now / static_cast<double>(list.size())) + " against " + gbps(before / static_cast<double>(list.size())) +
                 " before; the same ranks' compute moved " + pct(median(growths));
    a.findings.push_back(std::move(f));
  }

  // JIT stalls: new signatures or recompiles, GPU idle grown, stacks in a compiler.
  std::map<uint32_t, std::pair<std::vector<uint64_t>, size_t>> jit;  // rank: (new signatures, recompiles)
  // Without a baseline every kernel of a capture's first step is new, and idle has nothing
  // to have grown from: no JIT judgement.
  for (const auto& e : w.peers_only ? std::vector<JobReader::Event>{} : reads.jit_events) {
    if (e.kind == static_cast<uint8_t>(model::EventKind::kNewKernelSignature)) {
      jit[e.rank].first.push_back(e.value);
    } else {
      ++jit[e.rank].second;
    }
  }
  if (!jit.empty()) {
    Result<std::vector<model::StackDictEntry>> stacks = reader.store().stackNames(reader.job());
    if (!stacks.isOk()) return stacks.status();
    std::map<uint64_t, std::string> compiler;  // stack id: its compiler frame
    for (const auto& s : *stacks) {
      for (const std::string& frame : s.frames) {
        if (compilerFrame(frame)) {
          compiler.emplace(s.stack_id, frame);
          break;
        }
      }
    }
    std::vector<uint32_t> suspects;  // (sorted: the map's order)
    for (const auto& [r, what] : jit) suspects.push_back(r);
    auto samples = reader.stackSamples(w.from_step, w.to_step, a.rank_count, suspects, [&](uint64_t id) { return compiler.count(id) != 0; });
    if (!samples.isOk()) return samples.status();
    for (const auto& [r, what] : jit) {
      if (r >= a.rank_count || !a.present(r)) continue;
      const double idle_growth = a.win[r].idle - a.base[r].idle;
      if (idle_growth < o.idle_growth * a.base[r].iter) continue;
      Finding f = a.make(FindingKind::kJitStall);
      f.ranks = {r};
      f.pp_rank = a.by_rank[r]->pp_rank;
      f.slowdown = idle_growth / a.base[r].iter;
      const auto [all, in_compiler] = (*samples)[r];
      f.confidence = std::clamp(0.6 + (what.first.empty() ? 0 : 0.2) + (in_compiler > 0 ? 0.19 : 0), 0.6, 0.99);
      std::string names;
      for (size_t i = 0; i < what.first.size() && i < 2; ++i) {
        Result<model::KernelDictEntry> k = reader.store().kernelName(reader.job(), what.first[i]);
        names += (i == 0 ? " (" : ", ") + (k.isOk() ? shortKernelName(k->name) : std::to_string(what.first[i]));
      }
      if (!names.empty()) names += what.first.size() > 2 ? ", ...)" : ")";
      f.evidence = "rank " + std::to_string(r) + ": " + std::to_string(what.first.size()) + " new kernel signatures" + names + " and " +
                   std::to_string(what.second) + " recompiles in the window; GPU idle " + ms(a.win[r].idle) + " per step against " + ms(a.base[r].idle) +
                   " before; " + std::to_string(in_compiler) + " of " + std::to_string(all) + " CPU stack samples in a compiler";
      a.findings.push_back(std::move(f));
    }
  }

  std::stable_sort(a.findings.begin(), a.findings.end(), [](const Finding& x, const Finding& y) { return x.confidence > y.confidence; });
  return std::move(a.findings);
}

// The ranks whose collectives the analysis of `windows` reads (sorted): those whose
// transfer time grew (a slow link's) or is unknown, and those that may be stragglers (a
// straggler's own transfers tell a masked one): compute grown, and above its stage's median.
// Without a baseline neither is judged.
std::vector<uint32_t> trafficRanks(const std::vector<StepWindow>& windows, const std::vector<RankPhasesPair>& phases,
                                   const std::vector<const model::RankTopology*>& by_rank, const WindowOptions& o) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < windows.size(); ++i) {
    if (windows[i].peers_only) continue;
    const std::vector<RankPhases>& base = phases[i][0];
    const std::vector<RankPhases>& win = phases[i][1];
    auto present = [&](uint32_t r) { return judged(by_rank[r], win[r], base[r], false); };
    std::map<uint32_t, std::vector<double>> stage_compute;
    for (uint32_t r = 0; r < win.size(); ++r) {
      if (present(r)) stage_compute[by_rank[r]->pp_rank].push_back(win[r].compute);
    }
    std::map<uint32_t, double> stage_median;
    for (auto& [k, v] : stage_compute) stage_median[k] = median(std::move(v));
    for (uint32_t r = 0; r < win.size(); ++r) {
      if (!present(r)) continue;
      const bool unknown = win[r].transfer < 0 || base[r].transfer < 0;
      const bool may_straggle = straggles(win[r], base[r], stage_median[by_rank[r]->pp_rank], o);
      if (unknown || may_straggle || win[r].transfer > (1 + o.transfer_screen) * base[r].transfer) out.push_back(r);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

Result<std::vector<std::vector<Finding>>> analyzeWindows(const JobReader& reader, const std::vector<model::RankTopology>& topology,
                                                         const std::vector<StepWindow>& windows, const WindowOptions& o) {
  uint32_t rank_count = 0;
  for (const auto& t : topology) {
    // Per-rank arrays: a rank number far past any cluster would be gigabytes of them.
    if (t.rank >= kMaxRank) return Status::invalidArgument("rank " + std::to_string(t.rank) + ": the diagnosis handles ranks below " + std::to_string(kMaxRank));
    rank_count = std::max(rank_count, t.rank + 1);
  }
  std::vector<const model::RankTopology*> by_rank(rank_count, nullptr);
  for (const auto& t : topology) by_rank[t.rank] = &t;
  for (const StepWindow& w : windows) {
    if (w.from_step > w.to_step) return Status::invalidArgument("a window must not end before it starts");
    if (!w.peers_only && (w.base_to + 1 != w.from_step || w.base_from > w.base_to)) {
      return Status::invalidArgument("a baseline must end at the step before its window");
    }
  }
  // A batch of windows at a time: each read serves all of them (a chunk is decoded once),
  // and what they hold stays bounded however many windows a job has.
  constexpr size_t kBatchWindows = 8;
  std::vector<std::vector<Finding>> out;
  for (size_t start = 0; start < windows.size(); start += kBatchWindows) {
    const std::vector<StepWindow> batch(windows.begin() + static_cast<std::ptrdiff_t>(start),
                                        windows.begin() + static_cast<std::ptrdiff_t>(std::min(windows.size(), start + kBatchWindows)));
    uint64_t from = UINT64_MAX, to = 0;
    for (const StepWindow& w : batch) {
      from = std::min(from, w.from_step);
      to = std::max(to, w.to_step);
    }
    Result<std::vector<JobReader::Event>> jit =
        reader.events({static_cast<uint8_t>(model::EventKind::kNewKernelSignature), static_cast<uint8_t>(model::EventKind::kRecompile)}, from, to);
    if (!jit.isOk()) return jit.status();
    // The ranks with JIT events are the ones whose step and idle time the JIT stage reads.
    std::vector<bool> jit_ranks(rank_count, false);
    for (const JobReader::Event& e : *jit) {
      if (e.rank < rank_count) jit_ranks[e.rank] = true;
    }
    Result<std::vector<RankPhasesPair>> phases = reader.rankPhases(batch, rank_count, jit_ranks);
    if (!phases.isOk()) return phases.status();
    Result<std::vector<JobReader::CollectivesPair>> traffic = reader.collectives(batch, rank_count, trafficRanks(batch, *phases, by_rank, o));
    if (!traffic.isOk()) return traffic.status();
    for (size_t i = 0; i < batch.size(); ++i) {
      WindowReads reads{std::move((*phases)[i]), std::move((*traffic)[i]), {}};
      for (const JobReader::Event& e : *jit) {
        if (e.step >= batch[i].from_step && e.step <= batch[i].to_step) reads.jit_events.push_back(e);
      }
      Result<std::vector<Finding>> found = analyze(reader, topology, by_rank, batch[i], reads, o);
      if (!found.isOk()) return found.status();
      out.push_back(std::move(found).value());
    }
  }
  return out;
}

Result<std::vector<Finding>> analyzeWindow(const JobReader& reader, const std::vector<model::RankTopology>& topology, const StepWindow& w,
                                           const WindowOptions& o) {
  Result<std::vector<std::vector<Finding>>> found = analyzeWindows(reader, topology, {w}, o);
  if (!found.isOk()) return found.status();
  return std::move(found->front());
}

}  // namespace argus::diagnose
