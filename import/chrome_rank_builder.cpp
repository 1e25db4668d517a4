#include "import/chrome_rank_builder.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "model/kernel_signature.h"

namespace argus::import {

namespace {

// Thread of the synthetic step and microbatch ranges. Nothing reads it: the importer's
// kernels carry no launch time, so no range attributes their phase (their names do).
constexpr uint32_t kRangeThread = 0;

bool isWork(OpClass c) { return c != OpClass::kData && c != OpClass::kIgnore; }

// Ops that strictly enclose a work op of non-zero length on their track. Chrome "X"
// events of one thread nest, so a sweep in (start, longer first) order with a stack of
// the ops still open finds every ancestor.
std::vector<bool> enclosingOps(std::span<const ChromeOp> ops, const ChromeSax& kinds) {
  std::vector<uint32_t> order(ops.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const ChromeOp &x = ops[a], &y = ops[b];
    return std::tie(x.track, x.start_ns, y.end_ns, a) < std::tie(y.track, y.start_ns, x.end_ns, b);
  });
  std::vector<bool> enclosing(ops.size(), false);
  std::vector<uint32_t> open;
  uint32_t track = UINT32_MAX;
  for (uint32_t i : order) {
    const ChromeOp& op = ops[i];
    if (op.track != track) open.clear(), track = op.track;
    while (!open.empty() && ops[open.back()].end_ns <= op.start_ns) open.pop_back();
    int64_t len = op.end_ns - op.start_ns;
    if (len > 0 && isWork(kinds.kindOf(op.name).cls)) {
      for (uint32_t p : open) {
        const ChromeOp& parent = ops[p];
        if (parent.start_ns <= op.start_ns && op.end_ns <= parent.end_ns && parent.end_ns - parent.start_ns > len) enclosing[p] = true;
      }
    }
    open.push_back(i);
  }
  return enclosing;
}

struct Window {
  int64_t begin, end;
};

// Step N's window: from its first op's start to step N+1's first start when N+1 follows
// (iterations are contiguous: the idle between them belongs to the earlier one), else to
// its last op's end.
std::map<uint64_t, Window> stepWindows(std::span<const ChromeOp> ops) {
  std::map<uint64_t, Window> windows;
  for (const ChromeOp& op : ops) {
    if (op.step == kNoArg) continue;
    auto [it, inserted] = windows.try_emplace(op.step, Window{op.start_ns, op.end_ns});
    if (!inserted) {
      it->second.begin = std::min(it->second.begin, op.start_ns);
      it->second.end = std::max(it->second.end, op.end_ns);
    }
  }
  for (auto it = windows.begin(); it != windows.end(); ++it) {
    auto next = std::next(it);
    if (next != windows.end() && next->first == it->first + 1 && next->second.begin > it->second.begin) it->second.end = next->second.begin;
    // A range of zero length would be read as a mark that the next step ends.
    it->second.end = std::max(it->second.end, it->second.begin + 1);
  }
  return windows;
}

capture::TraceEvent range(uint32_t name, int64_t begin, int64_t end, uint32_t thread) {
  capture::TraceEvent e;
  e.type = capture::EventType::kRange;
  e.name = name;
  e.start_ns = begin;
  e.end_ns = end;
  e.thread = thread;
  return e;
}

// One `argus:microbatch` range per run of consecutive ops (in start order) that share
// step and microbatch; ops without a microbatch neither start nor break a run.
void addMicrobatchRuns(std::span<const ChromeOp> ops, uint32_t name, std::vector<capture::TraceEvent>* out) {
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < ops.size(); ++i) {
    if (ops[i].microbatch != kNoArg) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return ops[a].start_ns < ops[b].start_ns; });
  size_t i = 0;
  while (i < order.size()) {
    const ChromeOp& first = ops[order[i]];
    int64_t begin = first.start_ns, end = first.end_ns;
    size_t j = i + 1;
    for (; j < order.size() && ops[order[j]].step == first.step && ops[order[j]].microbatch == first.microbatch; ++j) {
      end = std::max(end, ops[order[j]].end_ns);
    }
    if (end > begin) out->push_back(range(name, begin, end, kRangeThread));
    i = j;
  }
}

}  // namespace

ChromeRank buildChromeRank(const ChromeRankInput& input, const std::vector<uint32_t>& stream_of_track, const ChromeSax& kinds,
                           ChromeTrace* trace) {
  std::span<const ChromeOp> ops = input.ops;
  ChromeCounts& counts = trace->counts;
  ChromeRank out;
  out.rank = input.rank;
  std::vector<capture::TraceEvent>& events = out.events;

  std::map<uint64_t, Window> windows = stepWindows(ops);
  out.steps = windows.size();
  for (const auto& [step, w] : windows) {
    uint32_t name = trace->names.intern(std::string(kStepRangePrefix) + "#" + std::to_string(step));
    events.push_back(range(name, w.begin, w.end, kRangeThread));
  }
  addMicrobatchRuns(ops, trace->names.intern(kMicrobatchRangeName), &events);

  std::vector<bool> enclosing = enclosingOps(ops, kinds);
  std::vector<uint64_t> signatures;  // by name id, 0 = not computed
  for (size_t i = 0; i < ops.size(); ++i) {
    const ChromeOp& op = ops[i];
    if (op.step != kNoArg) {
      const Window& w = windows.at(op.step);
      if (op.start_ns < w.begin || op.start_ns >= w.end) ++counts.crossing;
    }
    const OpKind& kind = kinds.kindOf(op.name);
    uint32_t stream = stream_of_track[op.track];
    if (kind.cls == OpClass::kData) {
      events.push_back(range(op.name, op.start_ns, op.end_ns, stream));
      ++counts.data_ranges;
      continue;
    }
    if (enclosing[i]) {
      ++counts.enclosing;
      continue;
    }
    if (op.name >= signatures.size()) signatures.resize(op.name + 1, 0);
    if (signatures[op.name] == 0) signatures[op.name] = model::kernelSignature(trace->names.text(op.name), {});
    capture::TraceEvent k;
    k.type = capture::EventType::kKernel;
    k.start_ns = op.start_ns;
    k.end_ns = op.end_ns;
    k.name = op.name;
    k.id = signatures[op.name];
    k.stream = stream;
    k.bytes = op.bytes;
    events.push_back(k);
    ++counts.ops;
    trace->op_event_bytes += op.event_bytes;
    if (kind.cls == OpClass::kCommunication) {
      // Every communication op gets a kCollective twin on its stream: the assembler then
      // counts the collective from the twin (op and bytes from the mapping) instead of from
      // the kernel, whose name may say neither.
      capture::TraceEvent c = k;
      c.type = capture::EventType::kCollective;
      c.op = kind.op;
      c.id = op.group;
      c.peer = op.peer;
      events.push_back(c);
      ++counts.collectives;
    }
  }
  std::stable_sort(events.begin(), events.end(), [](const capture::TraceEvent& a, const capture::TraceEvent& b) { return a.start_ns < b.start_ns; });
  events.shrink_to_fit();
  return out;
}

}  // namespace argus::import
