// A Megatron-style op-level timeline in the generic Chrome-trace format, generated in code
// with the truth the importer must recover (no real generic Chrome trace is in
// ../shared/data). Used by the chrome import unit tests, the CLI integration test and
// bench_import_chrome.
//
// One rank per pipeline stage; each step runs the 1F1B schedule over `microbatches`, with
// forward/backward-recv, -compute and -send per microbatch (the recv waits for the
// upstream stage, so idle gaps between microbatches are real bubbles), then
// grads-reduce-scatter (overlapping the last backward), an `optimizer` timer enclosing its
// sub-timers, and params-all-gather. Stage 0 loads data (batch-generator inside
// forward-compute); Megatron's forward-backward timer encloses the whole schedule.
// Every op knows what it is (role, phase, collective) by construction, not by its name;
// expectedRecords() turns that truth into the records the importer must produce.
#pragma once

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "model/kernel_signature.h"
#include "model/step_record.h"

namespace argus::testing {

enum class FixtureRole : uint8_t {
  kWork,       // device work: a kernel in the records
  kData,       // data loading (CPU range)
  kEnclosing,  // a timer around other ops of its thread
  kIgnored,    // forward-backward (the default mapping ignores it)
};

struct FixtureOp {
  uint32_t rank = 0;
  uint32_t tid = 0;  // 0 compute, 1 send, 2 recv, 3 collectives, 4 the forward-backward timer
  std::string name;
  int64_t start_ns = 0, end_ns = 0;
  int64_t step = -1, microbatch = -1;  // -1: no such arg
  FixtureRole role = FixtureRole::kWork;
  model::Phase phase = model::Phase::kOther;  // kWork: forward, backward, optimizer or communication
  model::CollectiveOp op = model::CollectiveOp::kOther;
  uint64_t bytes = 0;
  int64_t peer = -1;
  std::string group;
};

struct MegatronOptions {
  uint32_t stages = 4;
  uint32_t steps = 3;
  uint32_t microbatches = 8;
  uint64_t first_step = 100;
  int64_t base_ns = 1'700'000'000'000'000'000;
  // How ranks are named: process_name "rank R" (pid 1000 + R), one process whose
  // threads are "Rank R / stream S", or no metadata and pid = rank.
  enum class Naming { kProcessNames, kThreadNames, kPidIsRank } naming = Naming::kProcessNames;
  bool metadata_last = false;  // "M" events after the ops (Chrome allows them anywhere)
  int64_t step_gap_ns = 300'000;
  uint32_t seed = 7;
};

struct MegatronTrace {
  std::vector<FixtureOp> ops;  // every complete event, in file order
  uint64_t instants = 0;       // "i" events written (the importer does not read them)
};

// FixtureOp with the trailing fields defaulted (aggregate init would warn about them).
inline FixtureOp fixtureOp(uint32_t rank, uint32_t tid, std::string name, int64_t start_ns, int64_t end_ns, int64_t step, int64_t microbatch,
                           FixtureRole role, model::Phase phase = model::Phase::kOther, model::CollectiveOp op = model::CollectiveOp::kOther,
                           uint64_t bytes = 0, int64_t peer = -1, std::string group = "") {
  return {rank, tid, std::move(name), start_ns, end_ns, step, microbatch, role, phase, op, bytes, peer, std::move(group)};
}

namespace detail {

// Deterministic jitter: durations vary +-10% with (seed, rank, step, index).
inline int64_t jitter(uint32_t seed, uint32_t rank, uint64_t step, uint64_t index, int64_t base) {
  uint64_t x = (uint64_t{seed} << 48) ^ (uint64_t{rank} << 32) ^ (step << 16) ^ index;
  x ^= x >> 33, x *= 0xff51afd7ed558ccdULL, x ^= x >> 33, x *= 0xc4ceb9fe1a85ec53ULL, x ^= x >> 33;
  return base - base / 10 + static_cast<int64_t>(x % static_cast<uint64_t>(base / 5 + 1));
}

// 1F1B order of one stage: warm-up forwards, then one forward one backward, then cool-down backwards.
inline std::vector<std::pair<bool, uint32_t>> oneFOneB(uint32_t stage, uint32_t stages, uint32_t microbatches) {
  uint32_t warmup = std::min(stages - stage - 1, microbatches);
  std::vector<std::pair<bool, uint32_t>> order;
  for (uint32_t m = 0; m < warmup; ++m) order.push_back({true, m});
  for (uint32_t i = 0; i + warmup < microbatches; ++i) {
    order.push_back({true, warmup + i});
    order.push_back({false, i});
  }
  for (uint32_t m = microbatches - warmup; m < microbatches; ++m) order.push_back({false, m});
  return order;
}

inline void writeMicros(std::ostream& out, int64_t ns) { out << ns / 1000 << '.' << char('0' + ns % 1000 / 100) << char('0' + ns % 100 / 10) << char('0' + ns % 10); }

}  // namespace detail

inline MegatronTrace makeMegatronTrace(const MegatronOptions& o) {
  using P = model::Phase;
  using Op = model::CollectiveOp;
  const uint32_t S = o.stages, M = o.microbatches;
  const uint64_t kActBytes = 16ull << 20, kGradBytes = 256ull << 20;
  MegatronTrace t;
  std::vector<int64_t> free(S, o.base_ns);
  auto add = [&](FixtureOp op) {
    t.ops.push_back(std::move(op));
    return t.ops.back().end_ns;
  };
  for (uint64_t k = 0; k < o.steps; ++k) {
    uint64_t step = o.first_step + k;
    std::vector<std::vector<int64_t>> fdone(S, std::vector<int64_t>(M, -1)), bdone = fdone, fsend = fdone, bsend = fdone;
    std::vector<std::vector<std::pair<bool, uint32_t>>> order(S);
    std::vector<size_t> next(S, 0);
    std::vector<int64_t> step_begin = free, last_bwd_end(S, 0);
    for (uint32_t s = 0; s < S; ++s) order[s] = detail::oneFOneB(s, S, M);
    // Stages advance whenever their next action's input is there (a simple event simulation).
    for (bool progress = true; progress;) {
      progress = false;
      for (uint32_t s = 0; s < S; ++s) {
        while (next[s] < order[s].size()) {
          auto [fwd, m] = order[s][next[s]];
          bool has_upstream = fwd ? s > 0 : s + 1 < S;
          uint32_t up = fwd ? s - 1 : s + 1;
          if (has_upstream && (fwd ? fdone : bdone)[up][m] < 0) break;
          uint64_t idx = next[s] * 4;
          const char* dir = fwd ? "forward" : "backward";
          int64_t t0 = free[s] + 5'000;
          int64_t compute_start = t0;
          if (has_upstream) {
            // The recv posts when this stage is free and completes after the upstream's send.
            int64_t rs = std::max(t0, (fwd ? fdone : bdone)[up][m]);
            int64_t re = std::max(rs, (fwd ? fsend : bsend)[up][m]) + 3'000;
            add(fixtureOp(s, 2, std::string(dir) + "-recv", rs, re, int64_t(step), m, FixtureRole::kWork, P::kCommunication, Op::kRecv, kActBytes, up, "pp"));
            compute_start = re + 2'000;
          }
          int64_t dur = detail::jitter(o.seed, s, step, idx, fwd ? 1'200'000 : 2'400'000);
          int64_t ce = add(fixtureOp(s, 0, std::string(dir) + "-compute", compute_start, compute_start + dur, int64_t(step), m, FixtureRole::kWork,
                            fwd ? P::kForward : P::kBackward));
          if (fwd && s == 0) {
            add(fixtureOp(s, 0, "batch-generator", compute_start + 1'000, compute_start + 1'000 + detail::jitter(o.seed, s, step, idx + 1, 60'000),
                 int64_t(step), m, FixtureRole::kData));
          }
          bool has_downstream = fwd ? s + 1 < S : s > 0;
          if (has_downstream) {
            uint32_t down = fwd ? s + 1 : s - 1;
            int64_t se = add(fixtureOp(s, 1, std::string(dir) + "-send", ce, ce + detail::jitter(o.seed, s, step, idx + 2, 40'000), int64_t(step), m,
                              FixtureRole::kWork, P::kCommunication, Op::kSend, kActBytes, down, "pp"));
            (fwd ? fsend : bsend)[s][m] = se;
          }
          (fwd ? fdone : bdone)[s][m] = ce;
          if (!fwd) last_bwd_end[s] = ce;
          free[s] = ce;
          ++next[s];
          progress = true;
        }
      }
    }
    for (uint32_t s = 0; s < S; ++s) {
      // Gradient reduce-scatter overlaps the tail of the last backward (overlap_grad_reduce).
      int64_t rs_dur = detail::jitter(o.seed, s, step, 9001, 900'000);
      int64_t rs0 = last_bwd_end[s] - rs_dur / 3;
      int64_t rse = add(fixtureOp(s, 3, "grads-reduce-scatter", rs0, rs0 + rs_dur, int64_t(step), -1, FixtureRole::kWork, P::kCommunication,
                         Op::kReduceScatter, kGradBytes, -1, "dp"));
      int64_t o0 = std::max(rse, free[s]) + 10'000, cursor = o0 + 5'000;
      size_t parent = t.ops.size();
      add(fixtureOp(s, 0, "optimizer", o0, o0, int64_t(step), -1, FixtureRole::kEnclosing, P::kOptimizer));
      for (const char* child : {"optimizer-copy-to-main-grad", "optimizer-inner-step", "optimizer-copy-main-to-model-params"}) {
        int64_t d = detail::jitter(o.seed, s, step, 9100 + cursor % 7, 300'000);
        cursor = add(fixtureOp(s, 0, child, cursor, cursor + d, int64_t(step), -1, FixtureRole::kWork, P::kOptimizer)) + 4'000;
      }
      t.ops[parent].end_ns = cursor + 5'000;
      int64_t age = add(fixtureOp(s, 3, "params-all-gather", cursor + 5'000, cursor + 5'000 + detail::jitter(o.seed, s, step, 9200, 700'000),
                         int64_t(step), -1, FixtureRole::kWork, P::kCommunication, Op::kAllGather, kGradBytes, -1, "dp"));
      // Megatron's timer around the schedule, on a thread of its own (the mapping ignores it).
      add(fixtureOp(s, 4, "forward-backward", step_begin[s], last_bwd_end[s], int64_t(step), -1, FixtureRole::kIgnored));
      free[s] = age + o.step_gap_ns;
    }
  }
  return t;
}

// Writes the trace as Chrome-trace JSON ({"traceEvents": [...]}; times in us with exact
// ns decimals).
inline void writeChromeTrace(const MegatronOptions& o, MegatronTrace& t, std::ostream& out) {
  auto pidOf = [&](uint32_t rank) -> uint64_t {
    switch (o.naming) {
      case MegatronOptions::Naming::kProcessNames: return 1000 + rank;
      case MegatronOptions::Naming::kThreadNames: return 1;
      case MegatronOptions::Naming::kPidIsRank: return rank;
    }
    return 0;
  };
  auto tidOf = [&](const FixtureOp& op) -> uint64_t { return o.naming == MegatronOptions::Naming::kThreadNames ? op.rank * 10 + op.tid : op.tid; };
  static const char* kThread[] = {"compute stream 7", "send stream 8", "recv stream 9", "collective stream 10", "timers"};
  std::ostringstream meta;
  uint32_t ranks = 0;
  for (const FixtureOp& op : t.ops) ranks = std::max(ranks, op.rank + 1);
  for (uint32_t r = 0; r < ranks && o.naming != MegatronOptions::Naming::kPidIsRank; ++r) {
    if (o.naming == MegatronOptions::Naming::kProcessNames) {
      meta << R"({"ph":"M","name":"process_name","pid":)" << pidOf(r) << R"(,"args":{"name":"rank )" << r << R"("}},)" << '\n';
      for (uint32_t tid = 0; tid < 5; ++tid) {
        meta << R"({"ph":"M","name":"thread_name","pid":)" << pidOf(r) << R"(,"tid":)" << tid << R"(,"args":{"name":")" << kThread[tid]
             << R"("}},)" << '\n';
      }
    } else {
      for (uint32_t tid = 0; tid < 5; ++tid) {
        meta << R"({"ph":"M","name":"thread_name","pid":1,"tid":)" << r * 10 + tid << R"(,"args":{"name":"Rank )" << r << " / stream "
             << 7 + tid << R"("}},)" << '\n';
      }
    }
  }
  out << R"({"displayTimeUnit":"ns","otherData":{"tool":"megatron-timeline-fixture"},"traceEvents":[)" << '\n';
  if (!o.metadata_last) out << meta.str();
  t.instants = 0;
  int64_t last_step = -1;
  for (const FixtureOp& op : t.ops) {
    if (op.step != last_step && op.rank == 0) {
      out << R"({"ph":"i","s":"t","name":"iteration","pid":)" << pidOf(0) << R"(,"tid":)" << tidOf(op) << R"(,"ts":)";
      detail::writeMicros(out, op.start_ns);
      out << "},\n";
      ++t.instants;
      last_step = op.step;
    }
    out << R"({"ph":"X","cat":"megatron","name":")" << op.name << R"(","pid":)" << pidOf(op.rank) << R"(,"tid":)" << tidOf(op) << R"(,"ts":)";
    detail::writeMicros(out, op.start_ns);
    out << R"(,"dur":)";
    detail::writeMicros(out, op.end_ns - op.start_ns);
    out << R"(,"args":{"step":)" << op.step;
    if (op.microbatch >= 0) out << R"(,"microbatch":)" << op.microbatch;
    if (op.bytes > 0) out << R"(,"bytes":)" << op.bytes;
    if (op.peer >= 0) out << R"(,"peer":)" << op.peer;
    if (!op.group.empty()) out << R"(,"group":")" << op.group << '"';
    out << "}},\n";
  }
  if (o.metadata_last) out << meta.str();
  // Chrome's format tolerates a trailing comma only in its own viewer: end with a real event.
  out << R"({"ph":"C","name":"memory","pid":)" << pidOf(0) << R"(,"ts":)";
  detail::writeMicros(out, o.base_ns);
  out << R"(,"args":{"allocated":1}}]})" << '\n';
}

// The truth, computed without the importer.
using Span = std::pair<int64_t, int64_t>;

inline std::vector<Span> merged(std::vector<Span> v) {
  std::sort(v.begin(), v.end());
  std::vector<Span> out;
  for (const Span& s : v) {
    if (s.second <= s.first) continue;
    if (!out.empty() && s.first <= out.back().second) {
      out.back().second = std::max(out.back().second, s.second);
    } else {
      out.push_back(s);
    }
  }
  return out;
}

inline int64_t length(const std::vector<Span>& v) {
  int64_t n = 0;
  for (const Span& s : v) n += s.second - s.first;
  return n;
}

// Overlap of two merged lists (quadratic: the fixtures are small).
inline int64_t overlap(const std::vector<Span>& a, const std::vector<Span>& b) {
  int64_t n = 0;
  for (const Span& x : a) {
    for (const Span& y : b) n += std::max<int64_t>(0, std::min(x.second, y.second) - std::max(x.first, y.first));
  }
  return n;
}

// One record as it must come out: phase columns, (signature, phase) -> (count, total ns),
// (op, communicator, size class, peer) -> (count, bytes, total ns).
struct Expected {
  int64_t start = 0, end = 0;
  std::array<int64_t, model::kPhaseColumnCount> phase{};
  std::map<std::pair<uint64_t, model::Phase>, std::pair<uint32_t, int64_t>> kernels;  // count, total
  std::map<std::tuple<model::CollectiveOp, uint64_t, uint8_t, uint32_t>, std::tuple<uint32_t, uint64_t, int64_t>> collectives;
};

// The records the importer must produce, from the fixture's truth and the documented rules
// (docs/import/chrome.md): step windows from the ops' step args, members by start time.
inline std::map<std::pair<uint32_t, uint64_t>, Expected> expectedRecords(const MegatronTrace& t) {
  std::map<std::pair<uint32_t, uint64_t>, Expected> out;
  std::map<uint32_t, std::vector<const FixtureOp*>> by_rank;
  for (const FixtureOp& op : t.ops) by_rank[op.rank].push_back(&op);
  for (const auto& [rank, ops] : by_rank) {
    std::map<int64_t, Span> windows;
    std::vector<Span> busy, compute_all, data;
    for (const FixtureOp* op : ops) {
      if (op->role == FixtureRole::kIgnored) continue;
      auto [it, fresh] = windows.try_emplace(op->step, Span{op->start_ns, op->end_ns});
      it->second = {std::min(it->second.first, op->start_ns), std::max(it->second.second, op->end_ns)};
      if (op->role == FixtureRole::kWork) busy.push_back({op->start_ns, op->end_ns});
      if (op->role == FixtureRole::kWork && op->phase != model::Phase::kCommunication) compute_all.push_back({op->start_ns, op->end_ns});
      if (op->role == FixtureRole::kData) data.push_back({op->start_ns, op->end_ns});
    }
    for (auto it = windows.begin(); it != windows.end(); ++it) {
      auto next = std::next(it);
      if (next != windows.end() && next->first == it->first + 1) it->second.second = next->second.first;
    }
    busy = merged(busy), compute_all = merged(compute_all), data = merged(data);
    // Microbatch runs: consecutive ops (start order, file order on ties) of one (step, microbatch).
    std::vector<const FixtureOp*> mb;
    for (const FixtureOp* op : ops) {
      if (op->role != FixtureRole::kIgnored && op->microbatch >= 0) mb.push_back(op);
    }
    std::stable_sort(mb.begin(), mb.end(), [](const FixtureOp* a, const FixtureOp* b) { return a->start_ns < b->start_ns; });
    std::vector<Span> runs;
    for (size_t i = 0; i < mb.size(); ++i) {
      bool same = !runs.empty() && mb[i - 1]->step == mb[i]->step && mb[i - 1]->microbatch == mb[i]->microbatch;
      if (same) {
        runs.back().second = std::max(runs.back().second, mb[i]->end_ns);
      } else {
        runs.push_back({mb[i]->start_ns, mb[i]->end_ns});
      }
    }
    for (const auto& [step, w] : windows) {
      Expected& x = out[{rank, static_cast<uint64_t>(step)}];
      auto [b, e] = w;
      x.start = b, x.end = e;
      std::vector<Span> fwd, bwd, opt, compute, comm, mbs, gaps;
      for (const FixtureOp* op : ops) {
        if (op->role != FixtureRole::kWork || op->start_ns < b || op->start_ns >= e) continue;
        Span s{op->start_ns, op->end_ns};
        bool is_comm = op->phase == model::Phase::kCommunication;
        (is_comm ? comm : compute).push_back(s);
        if (op->phase == model::Phase::kForward) fwd.push_back(s);
        if (op->phase == model::Phase::kBackward) bwd.push_back(s);
        if (op->phase == model::Phase::kOptimizer) opt.push_back(s);
        auto& k = x.kernels[{model::kernelSignature(op->name, {}), op->phase}];
        ++k.first;
        k.second += s.second - s.first;
        if (is_comm) {
          uint64_t comm_id = op->group.empty() ? 0 : XXH3_64bits(op->group.data(), op->group.size());
          uint32_t peer = op->peer < 0 ? model::CollectiveStat::kNoPeer : static_cast<uint32_t>(op->peer);
          auto& c = x.collectives[{op->op, comm_id, model::sizeClassOf(op->bytes), peer}];
          ++std::get<0>(c);
          std::get<1>(c) += op->bytes;
          std::get<2>(c) += s.second - s.first;
        }
      }
      for (const Span& r : runs) {
        if (r.second > b && r.first < e) mbs.push_back({std::max(r.first, b), std::min(r.second, e)});
      }
      mbs = merged(mbs);
      for (size_t i = 1; i < mbs.size(); ++i) gaps.push_back({mbs[i - 1].second, mbs[i].first});
      comm = merged(comm);
      auto& p = x.phase;
      p[int(model::PhaseColumn::kForward)] = length(merged(fwd));
      p[int(model::PhaseColumn::kBackward)] = length(merged(bwd));
      p[int(model::PhaseColumn::kOptimizer)] = length(merged(opt));
      p[int(model::PhaseColumn::kCompute)] = length(merged(compute));
      p[int(model::PhaseColumn::kCommTotal)] = length(comm);
      p[int(model::PhaseColumn::kCommExposed)] = length(comm) - overlap(comm, compute_all);
      p[int(model::PhaseColumn::kGpuIdle)] = (e - b) - overlap(busy, {{b, e}});
      p[int(model::PhaseColumn::kDataWait)] = overlap(data, {{b, e}});
      p[int(model::PhaseColumn::kBubble)] = length(gaps) - overlap(gaps, busy);
      p[int(model::PhaseColumn::kLaunchGap)] = 0;
    }
  }
  return out;
}

}  // namespace argus::testing
