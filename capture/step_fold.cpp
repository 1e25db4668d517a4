// StepAssembler::foldMembers: the once-per-step arithmetic that turns the buffered events
// of one step into its StepRecord (field definitions: docs/capture/step-assembler.md).
#include <algorithm>

#include "capture/step_assembler.h"

namespace argus::capture {

namespace {

using model::Phase;
using model::PhaseColumn;

struct RunningUnion {
  int64_t begin = INT64_MIN, end = INT64_MIN, total = 0;
  void add(int64_t b, int64_t e) {
    if (e <= b) return;
    if (b > end) {
      total += end - begin;
      begin = b, end = e;
    } else if (e > end) {
      end = e;
    }
  }
  int64_t finish() const { return total + (end - begin); }
};

// Idle time in [g0, g1) that passed before the work ending the gap had even been launched:
// the device waited for the host.
int64_t hostBound(int64_t g0, int64_t g1, int64_t launch) {
  if (launch == kNoTime || g1 <= g0) return 0;
  return std::clamp(launch, g0, g1) - g0;
}

}  // namespace

void StepAssembler::foldMembers(const PendingStep& s) {
  const int64_t b = s.begin, e = s.end;
  model::StepRecord& rec = record_;
  rec.rank = options_.rank;
  rec.step = s.step;
  rec.attempt = options_.attempt;
  rec.start_ns = b;
  rec.end_ns = e;
  rec.iter_ns = e - b;
  rec.flags = s.flags | (partial_since_emit_ ? model::kStepPartial : 0u);
  rec.phase_ns.fill(0);
  rec.collectives.clear();
  rec.stacks.clear();
  rec.events.clear();

  // 1. One pass over all buffered work in start order: fold this step's members (key in
  //    [b, e)): phase, kernel and collective statistics, phase unions; and merge the
  //    device's busy time and all compute, whatever step it is from.
  auto byStart = [](const Act& x, const Act& y) { return x.start < y.start; };
  if (!std::is_sorted(acts_.begin(), acts_.end(), byStart)) std::sort(acts_.begin(), acts_.end(), byStart);
  timelines_.build(ranges_);
  const bool use_ranges = !timelines_.empty();
  if (++fold_stamp_ == 0) {  // wrapped: forget every cell for real
    for (StatCell& c : stat_cells_) c.stamp = 0;
    fold_stamp_ = 1;
  }
  collective_index_.clear();
  busy_.clear();
  busy_launch_.clear();
  compute_all_.clear();
  comm_.clear();
  uint32_t kernels = 0;
  RunningUnion forward, backward, optimizer, compute;
  auto addCollective = [&](model::CollectiveOp op, uint64_t comm, uint64_t bytes, uint32_t peer, int64_t dur) {
    uint8_t size_class = model::sizeClassOf(bytes);
    model::FlatIndex::Key key{comm, static_cast<uint64_t>(op) | uint64_t{size_class} << 8 | uint64_t{peer} << 32};
    bool inserted = false;
    uint32_t idx = collective_index_.findOrInsert(key, static_cast<uint32_t>(rec.collectives.size()), &inserted);
    if (inserted) {
      model::CollectiveStat c;
      c.op = op, c.communicator = comm, c.size_class = size_class, c.peer_rank = peer;
      rec.collectives.push_back(c);
    }
    model::CollectiveStat& c = rec.collectives[idx];
    ++c.count;
    c.bytes += bytes;
    c.total_ns += dur;
  };
  auto fold = [&](const Act& a) {
    int64_t dur = a.end - a.start;
    if (a.kind == ActKind::kCollective) {
      addCollective(a.op, a.id, a.bytes, a.peer, dur);
      return;
    }
    Phase phase = Phase::kUnknown;
    if (a.kind == ActKind::kComm) {
      phase = Phase::kCommunication;
    } else {
      if (use_ranges && a.launch != kNoTime) phase = timelines_.phaseAt(a.thread, s.thread, a.launch);
      if (phase == Phase::kUnknown) phase = a.name_phase;
    }
    StatCell& cell = stat_cells_[static_cast<size_t>(a.slot) * kPhaseSlots + static_cast<size_t>(phase)];
    if (cell.stamp != fold_stamp_) {
      cell = {fold_stamp_, kernels};
      if (rec.kernels.size() <= kernels) rec.kernels.emplace_back();
      if (hist_runs_.size() < 2 * (size_t{kernels} + 1)) hist_runs_.resize(2 * (size_t{kernels} + 1));
      hist_runs_[2 * kernels] = HistRun{};
      hist_runs_[2 * kernels + 1] = HistRun{};
      model::KernelStat& k = rec.kernels[kernels++];
      k.signature = a.id;
      k.phase = phase;
      k.count = 0;
      k.total_ns = 0;
      k.hist.clear();
    }
    model::KernelStat& k = rec.kernels[cell.index];
    ++k.count;
    k.total_ns += dur;
    {
      // Bucket 0 holds every duration <= 0.
      uint64_t d = dur <= 0 ? 0 : static_cast<uint64_t>(dur);
      HistRun* runs = &hist_runs_[2 * size_t{cell.index}];
      if (d - runs[0].lo < runs[0].hi - runs[0].lo) {
        ++runs[0].n;
      } else if (d - runs[1].lo < runs[1].hi - runs[1].lo) {
        ++runs[1].n;
      } else {
        if (runs[1].n > 0) k.hist.add(runs[1].dur, runs[1].n);
        runs[1] = runs[0];
        int32_t bucket = model::DurationHistogram::bucketOf(dur);
        runs[0] = HistRun{model::DurationHistogram::lowerBound(bucket), model::DurationHistogram::upperBound(bucket), dur, 1};
      }
    }
    // The first step's signatures are the session's starting set (their dictionary entries
    // say so); an event marks one that appears later: a JIT compile, a new code path.
    if (a.new_signature && stats_.steps_emitted > 0) rec.events.push_back({model::EventKind::kNewKernelSignature, a.start, a.id, 0});
    switch (a.kind) {
      case ActKind::kComm:
        appendMerged(&comm_, a.start, a.end);
        if (!collective_events_seen_) addCollective(a.op, 0, a.bytes, a.peer, dur);
        break;
      case ActKind::kCompute:
        compute.add(a.start, a.end);
        if (phase == Phase::kForward) forward.add(a.start, a.end);
        if (phase == Phase::kBackward) backward.add(a.start, a.end);
        if (phase == Phase::kOptimizer) optimizer.add(a.start, a.end);
        break;
      default:  // copies: device busy time only
        break;
    }
  };
  for (Act& a : acts_) {
    if (a.state == kPending && a.key < e) {
      a.state = kConsumed;
      if (a.key >= b) {
        fold(a);
      } else {
        ++stats_.outside_steps;
      }
    }
    if (a.kind == ActKind::kCollective || a.end <= a.start) continue;
    if (busy_.empty() || a.start > busy_.back().end) {
      busy_.push_back({a.start, a.end});
      busy_launch_.push_back(a.launch);
    } else if (a.end > busy_.back().end) {
      busy_.back().end = a.end;
    }
    if (a.kind == ActKind::kCompute) appendMerged(&compute_all_, a.start, a.end);
  }
  rec.kernels.resize(kernels);
  for (uint32_t i = 0; i < kernels; ++i) {
    for (const HistRun& r : std::span<const HistRun>(hist_runs_).subspan(2 * size_t{i}, 2)) {
      if (r.n > 0) rec.kernels[i].hist.add(r.dur, r.n);
    }
  }
  rec.phase(PhaseColumn::kForward) = forward.finish();
  rec.phase(PhaseColumn::kBackward) = backward.finish();
  rec.phase(PhaseColumn::kOptimizer) = optimizer.finish();
  rec.phase(PhaseColumn::kCompute) = compute.finish();
  rec.phase(PhaseColumn::kCommTotal) = lengthOf(comm_);
  rec.phase(PhaseColumn::kCommExposed) = differenceLength(comm_, compute_all_);

  // 3. The device inside the window [b, e): idle time, and the part of each idle gap that
  //    passed before the work ending it was launched (host-bound: launch gap).
  int64_t busy = 0, launch_gap = 0, cursor = b;
  for (size_t i = 0; i < busy_.size(); ++i) {
    const Interval& iv = busy_[i];
    if (iv.end <= b) continue;
    if (iv.begin >= e) {
      launch_gap += hostBound(cursor, e, busy_launch_[i]);
      break;
    }
    if (iv.begin > cursor) launch_gap += hostBound(cursor, iv.begin, busy_launch_[i]);
    busy += std::min(iv.end, e) - std::max(iv.begin, b);
    cursor = std::max(cursor, iv.end);
  }
  rec.phase(PhaseColumn::kGpuIdle) = (e - b) - busy;
  rec.phase(PhaseColumn::kLaunchGap) = launch_gap;

  // 4. CPU ranges: data wait (union of data-loading ranges) and the pipeline bubble
  //    (device idle in the gaps between microbatch ranges).
  scratch_.clear();
  for (const CpuRange& r : ranges_) {
    if (r.cls == RangeClass::kDataLoad && r.end > b && r.begin < e) scratch_.push_back({std::max(r.begin, b), std::min(r.end, e)});
  }
  rec.phase(PhaseColumn::kDataWait) = unionOf(scratch_, &merged_);
  scratch_.clear();
  for (const CpuRange& r : ranges_) {
    if (r.cls == RangeClass::kMicrobatch && r.end > b && r.begin < e) scratch_.push_back({std::max(r.begin, b), std::min(r.end, e)});
  }
  unionOf(scratch_, &merged_);
  mb_gaps_.clear();
  for (size_t i = 1; i < merged_.size(); ++i) mb_gaps_.push_back({merged_[i - 1].end, merged_[i].begin});
  rec.phase(PhaseColumn::kBubble) = lengthOf(mb_gaps_) - intersectionLength(mb_gaps_, busy_);

  // 5. Instants: stack samples and marks inside the window.
  stack_index_.clear();
  size_t markers = 0;
  for (const Instant& in : instants_) {
    if (in.ts >= e) continue;
    if (in.ts < b) {
      stats_.outside_steps += in.sample;
      continue;
    }
    if (in.sample) {
      bool inserted = false;
      uint32_t idx = stack_index_.findOrInsert({in.value, 0}, static_cast<uint32_t>(rec.stacks.size()), &inserted);
      if (inserted) rec.stacks.push_back({in.value, 0});
      ++rec.stacks[idx].samples;
    } else if (markers++ < options_.max_markers_per_step) {
      rec.events.push_back({model::EventKind::kMarker, in.ts, 0, in.name});
      if (in.name >= string_sent_.size()) string_sent_.resize(std::max<size_t>(in.name + 1, string_sent_.size() * 2));
      if (in.name != 0 && !string_sent_[in.name]) {
        string_sent_[in.name] = true;
        new_strings_.push_back({in.name, std::string(names_.text(in.name))});
      }
    } else {
      ++stats_.markers_dropped;
    }
  }
  if (dropped_since_emit_ > 0) rec.events.push_back({model::EventKind::kDroppedEvents, b, dropped_since_emit_, 0});
  rec.canonicalize();
}

}  // namespace argus::capture
