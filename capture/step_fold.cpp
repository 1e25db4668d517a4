// StepAssembler::foldMembers: the once-per-step arithmetic that turns the buffered events
// of one step into its StepRecord (field definitions: docs/capture/step-assembler.md).
//
// The buffers hold every pending step's work (an import keeps a minute of trace), so the
// fold visits only what can touch this step: buffered work in start order from the front up
// to where no later activity can be a member (every key lies at most max_lead_ before its
// start) or overlap a member's communication; ranges up to the step's end and its last
// member launch. Each step costs its own work, not the buffer.
#include <algorithm>
#include <bit>
#include <cassert>

#include "capture/step_assembler.h"

namespace argus::capture {

namespace {

using model::Phase;
using model::PhaseColumn;

// Idle time in [g0, g1) that passed before the work ending the gap had even been launched:
// the device waited for the host.
int64_t hostBound(int64_t g0, int64_t g1, int64_t launch) {
  if (launch == kNoTime || g1 <= g0) return 0;
  return std::clamp(launch, g0, g1) - g0;
}

}  // namespace

// Forced inline into scanActs' loop, like foldMember.
[[gnu::always_inline]] inline void StepAssembler::foldKernelStat(uint32_t cell_id, int64_t dur, LiveStats& live) {
  // Durations repeat (kernels of a kind take the same time, to the ns that traces round
  // to): a small direct-mapped memo of duration -> bucket saves most bucketOf calls.
  BucketMemo& memo = bucket_memo_[(static_cast<uint64_t>(dur) * 0x9e3779b97f4a7c15ull) >> (64 - kBucketMemoBits)];
  if (memo.dur != dur) memo = {dur, model::DurationHistogram::bucketOf(dur)};
  const int32_t bucket = memo.bucket;
  StatCell& cell = stat_cells_[cell_id];
  if (cell.stamp != live.stamp) {  // the statistic's first kernel in this fold
    // Listed while used in the last kListedFolds folds (orderKernelStats drops the others).
    if (live.stamp - cell.stamp > kListedFolds) new_cells_.push_back(cell_id);
    cell = {live.stamp, live.count++};
    if (cell.index >= stat_accs_.size()) stat_accs_.resize(std::max<size_t>(64, stat_accs_.size() * 2));
    stat_accs_[cell.index].base = bucket - kStatWindow / 2;
  }
  StatAcc& acc = stat_accs_[cell.index];
  acc.total_ns += dur;
  const uint32_t offset = static_cast<uint32_t>(bucket - acc.base);
  if (offset < kStatWindow) {
    ++acc.counts[offset];
    acc.mask |= uint64_t{1} << offset;
  } else {
    spillBucket(cell.index, bucket);
  }
}

// Forced inline: once per member, in the loop of scanActs (GCC's -O2 heuristics keep it
// out of line, a call per kernel).
[[gnu::always_inline]] inline void StepAssembler::foldMember(const Act& a, const PendingStep& s, LiveStats& live) {
  int64_t dur = a.end - a.start;
  if (a.kind == ActKind::kCollective) {
    int64_t wait = a.slot == kNoSlot ? -1 : static_cast<int64_t>(static_cast<double>(dur) * a.slot / kWaitScale + 0.5);
    addCollective(a.op, a.id, a.bytes, a.peer, dur, wait);
    return;
  }
  Phase phase = Phase::kUnknown;
  if (a.kind == ActKind::kComm) {
    phase = Phase::kCommunication;
  } else {
    if (a.launch != kNoTime && !timelines_.empty()) phase = timelines_.phaseAt(a.thread, s.thread, a.launch);
    if (phase == Phase::kUnknown) phase = a.name_phase;
  }
  foldKernelStat(a.slot * kPhaseSlots + static_cast<uint32_t>(phase), dur, live);
  // The first step's signatures are the session's starting set (their dictionary entries
  // say so); an event marks one that appears later: a JIT compile, a new code path.
  if ((a.flags & kNewSignature) && stats_.steps_emitted > 0) record_.events.push_back({model::EventKind::kNewKernelSignature, a.start, a.id, 0});
  switch (a.kind) {
    case ActKind::kComm:
      appendMerged(&comm_, a.start, a.end);
      // An NCCL kernel is its own collective unless a collective event covers it; without
      // collective events in the session none can (else resolveNcclKernels decides).
      if (!collective_events_seen_) addCollective(a.op, 0, a.bytes, a.peer, dur);
      break;
    case ActKind::kCompute:
      compute_.add(a.start, a.end);
      if (phase == Phase::kForward) forward_.add(a.start, a.end);
      if (phase == Phase::kBackward) backward_.add(a.start, a.end);
      if (phase == Phase::kOptimizer) optimizer_.add(a.start, a.end);
      break;
    default:  // copies: device busy time only
      break;
  }
}

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
  wait_known_ns_.clear();
  rec.stacks.clear();
  rec.events.clear();

  // 1. Buffered work in start order (ties: earlier launch first), in one pass: fold this
  //    step's members (key in [b, e)) into phase, kernel and collective statistics and
  //    phase unions, count older unclaimed work as outside every step, and merge the
  //    device's busy time and all compute, whatever step it is from. Member launches lie
  //    in [b, e) when keyed by launch, else within the buffered launch leads of their start.
  if (!acts_sorted_) {
    std::sort(acts_.begin(), acts_.end(), [](const Act& x, const Act& y) { return x.start != y.start ? x.start < y.start : x.launch < y.launch; });
    acts_sorted_ = true;
    consumed_end_ = acts_.size();  // consumed work may be anywhere now
    if (!acts_.empty()) last_act_start_ = acts_.back().start;
  }
  buildTimelines(b - start_keyed_lead_, e > INT64_MAX - start_keyed_lag_ ? INT64_MAX : e - 1 + start_keyed_lag_, s);
  if (++fold_stamp_ == 0) {  // wrapped: forget every cell for real
    for (StatCell& c : stat_cells_) c.stamp = 0;
    cell_order_.clear();
    fold_stamp_ = kListedFolds + 1;
  }
  collective_index_.clear();
  comm_.clear();
  forward_ = backward_ = optimizer_ = compute_ = RunningUnion{};
  scanActs(s);
  resolveNcclKernels();
  finishCollectiveWaits();
  finishKernelStats();
  rec.phase(PhaseColumn::kForward) = forward_.finish();
  rec.phase(PhaseColumn::kBackward) = backward_.finish();
  rec.phase(PhaseColumn::kOptimizer) = optimizer_.finish();
  rec.phase(PhaseColumn::kCompute) = compute_.finish();
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

  // 4. CPU ranges (gathered by buildTimelines): data wait (union of data-loading ranges)
  //    and the pipeline bubble (device idle in the gaps between microbatch ranges).
  rec.phase(PhaseColumn::kDataWait) = unionOf(data_, &merged_);
  unionOf(scratch_, &merged_);
  mb_gaps_.clear();
  for (size_t i = 1; i < merged_.size(); ++i) mb_gaps_.push_back({merged_[i - 1].end, merged_[i].begin});
  rec.phase(PhaseColumn::kBubble) = lengthOf(mb_gaps_) - intersectionLength(mb_gaps_, busy_);
  // A step the device took no part in (a CPU-only job, or device work the source cannot
  // see): the kernel-based columns above are all 0, so its CPU ranges say where the time went.
  if (kernel_stats_ == 0 && busy == 0 && foldCpuPhases(s)) rec.flags |= model::kStepCpuPhases;

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

void StepAssembler::scanActs(const PendingStep& s) {
  const int64_t b = s.begin, e = s.end;
  busy_.clear();
  busy_launch_.clear();
  compute_all_.clear();
  collective_spans_.clear();
  uncovered_.clear();
  longest_collective_ = 0;
  const bool spans = collective_events_seen_;
  // Work with a key before e starts before e + max_lead_; a member NCCL kernel extends the
  // scan to its end (the compute it overlaps, the collectives that may cover it).
  int64_t scan_end = e > INT64_MAX - max_lead_ ? INT64_MAX : e + max_lead_;
  // The open blocks of busy time and of compute live in locals, stored when the next block
  // begins: foldMember's stores may alias the vectors' ends, which would be reloaded per
  // activity. Nothing appends to acts_ during the scan.
  Act* const acts = acts_.begin();
  const size_t n = acts_.size();
  Interval busy{INT64_MIN, INT64_MIN}, compute{INT64_MIN, INT64_MIN};  // begin == INT64_MIN: none yet
  LiveStats live{fold_stamp_, 0};
  size_t i = 0;
  for (; i < n; ++i) {
    Act& a = acts[i];
    if (a.start >= scan_end) break;
    if (!(a.flags & kConsumed) && a.key() < e) {
      a.flags |= kConsumed;
      if (a.key() >= b) {
        foldMember(a, s, live);
        if (a.kind == ActKind::kComm) {
          scan_end = std::max(scan_end, a.end);
          if (spans) uncovered_.push_back(static_cast<uint32_t>(i));
        }
      } else {
        ++stats_.outside_steps;
      }
    }
    if (a.kind == ActKind::kCollective) {
      if (spans) {
        collective_spans_.push_back({a.start, a.end, a.device, a.stream});
        longest_collective_ = std::max(longest_collective_, a.end - a.start);
      }
      continue;
    }
    if (a.end <= a.start) continue;
    if (busy.begin == INT64_MIN || a.start > busy.end) {
      if (busy.begin != INT64_MIN) busy_.push_back(busy);
      busy = {a.start, a.end};
      busy_launch_.push_back(a.launch);
    } else if (a.end > busy.end) {
      busy.end = a.end;
    }
    if (a.kind == ActKind::kCompute) {
      if (compute.begin == INT64_MIN || a.start > compute.end) {
        if (compute.begin != INT64_MIN) compute_all_.push_back(compute);
        compute = {a.start, a.end};
      } else if (a.end > compute.end) {
        compute.end = a.end;
      }
    }
  }
  kernel_stats_ = live.count;
  consumed_end_ = std::max(consumed_end_, i);
  if (busy.begin != INT64_MIN) busy_.push_back(busy);
  if (compute.begin != INT64_MIN) compute_all_.push_back(compute);
  // When the device is idle at the window's end, the work that ends that gap (the first busy
  // work after it, possibly past the scan) tells whether the host was late to launch it.
  for (; i < n && (busy_.empty() || busy_.back().end < e); ++i) {
    const Act& a = acts[i];
    if (a.kind != ActKind::kCollective && a.end > a.start && (busy_.empty() || a.start > busy_.back().end)) {
      busy_.push_back({a.start, a.end});
      busy_launch_.push_back(a.launch);
    }
  }
}

void StepAssembler::resolveNcclKernels() {
  collective_cursor_ = 0;
  for (uint32_t i : uncovered_) {
    const Act& k = acts_[i];
    if (!coveredByCollective(k)) addCollective(k.op, 0, k.bytes, k.peer, k.end - k.start);
  }
}

bool StepAssembler::coveredByCollective(const Act& k) {
  // Kernels come in start order: a collective that starts more than the longest one before
  // this kernel ends before it, and before every later kernel. Overlap is of the half-open
  // spans, or the same start (empty spans).
  const std::vector<CollectiveSpan>& c = collective_spans_;
  while (collective_cursor_ < c.size() && c[collective_cursor_].start < k.start - longest_collective_) ++collective_cursor_;
  for (size_t i = collective_cursor_; i < c.size() && c[i].start <= k.end; ++i) {
    if (c[i].stream != kAnyStream && (c[i].device != k.device || c[i].stream != k.stream)) continue;
    if (std::max(c[i].start, k.start) < std::min(c[i].end, k.end) || c[i].start == k.start) return true;
  }
  return false;
}

void StepAssembler::buildTimelines(int64_t lo, int64_t hi, const PendingStep& s) {
  const int64_t b = s.begin, e = s.end;
  timelines_.clear();
  data_.clear();
  scratch_.clear();  // microbatch ranges
  // Phase ranges that can enclose a member launch in [lo, hi]; data-loading and microbatch
  // ranges inside the window [b, e). Sorted ranges stop at the first that begins past both.
  const int64_t stop = std::max(e, hi == INT64_MAX ? hi : hi + 1);
  for (size_t i = 0; i < ranges_.size(); ++i) {
    const CpuRange& r = ranges_[i];
    if (r.begin >= stop) {
      if (ranges_sorted_) break;
      continue;
    }
    if (r.end <= emitted_until_) continue;  // dead, not yet pruned
    if (r.end > b && r.begin < e) {
      if (r.cls == RangeClass::kDataLoad) data_.push_back({std::max(r.begin, b), std::min(r.end, e)});
      if (r.cls == RangeClass::kMicrobatch) scratch_.push_back({std::max(r.begin, b), std::min(r.end, e)});
    }
    if (r.end > lo && r.begin <= hi) timelines_.add(r);
  }
  // A thread with phase ranges still buffered keeps its own (empty) timeline: its kernels
  // do not borrow the marker thread's ranges just because this step's launches are away
  // from its ranges.
  timeline_threads_.clear();
  for (const PhaseThread& p : phase_threads_) {
    if (p.last_end > emitted_until_) timeline_threads_.push_back(p.thread);
  }
  timelines_.finish(timeline_threads_);
}

bool StepAssembler::foldCpuPhases(const PendingStep& s) {
  const int64_t b = s.begin, e = s.end;
  // The window's phase and communication ranges on every thread (a backward or a collective
  // may run on a thread of its own), clipped to [b, e), by thread then begin.
  cpu_ranges_.clear();
  for (size_t i = 0; i < ranges_.size(); ++i) {
    const CpuRange& r = ranges_[i];
    if (r.begin >= e) {
      if (ranges_sorted_) break;
      continue;
    }
    if (r.end <= b) continue;
    Phase p = phaseOfRange(r.cls);
    if (!r.comm && p != Phase::kForward && p != Phase::kBackward && p != Phase::kOptimizer) continue;
    cpu_ranges_.push_back({std::max(r.begin, b), std::min(r.end, e), r.thread, r.cls, r.comm});
  }
  if (cpu_ranges_.empty()) return false;
  std::sort(cpu_ranges_.begin(), cpu_ranges_.end(),
            [](const CpuRange& x, const CpuRange& y) { return x.thread != y.thread ? x.thread < y.thread : x.begin < y.begin; });
  for (std::vector<Interval>& v : cpu_sets_) v.clear();
  for (size_t i = 0; i < cpu_ranges_.size();) {
    // One thread: its compute is its phase time outside its collectives (a blocking
    // collective inside backward is waiting, not computing).
    thread_phase_.clear();
    thread_comm_.clear();
    const uint32_t thread = cpu_ranges_[i].thread;
    for (; i < cpu_ranges_.size() && cpu_ranges_[i].thread == thread; ++i) {
      const CpuRange& r = cpu_ranges_[i];
      Phase p = phaseOfRange(r.cls);
      if (r.comm) {
        appendMerged(&thread_comm_, r.begin, r.end);
        cpu_sets_[kCpuComm].push_back({r.begin, r.end});
      } else if (p == Phase::kForward || p == Phase::kBackward || p == Phase::kOptimizer) {
        appendMerged(&thread_phase_, r.begin, r.end);
        cpu_sets_[p == Phase::kForward ? kCpuForward : p == Phase::kBackward ? kCpuBackward : kCpuOptimizer].push_back({r.begin, r.end});
      }
    }
    // thread_phase_ \ thread_comm_, both merged: each phase interval minus the comm
    // intervals that overlap it (a cursor, since both are in begin order).
    size_t c = 0;
    for (const Interval& ph : thread_phase_) {
      int64_t cur = ph.begin;
      while (c < thread_comm_.size() && thread_comm_[c].end <= cur) ++c;
      for (size_t k = c; k < thread_comm_.size() && thread_comm_[k].begin < ph.end; ++k) {
        if (thread_comm_[k].begin > cur) cpu_sets_[kCpuCompute].push_back({cur, thread_comm_[k].begin});
        cur = std::max(cur, thread_comm_[k].end);
      }
      if (cur < ph.end) cpu_sets_[kCpuCompute].push_back({cur, ph.end});
    }
  }
  model::StepRecord& rec = record_;
  rec.phase(PhaseColumn::kForward) = unionOf(cpu_sets_[kCpuForward], &cpu_union_[0]);
  rec.phase(PhaseColumn::kBackward) = unionOf(cpu_sets_[kCpuBackward], &cpu_union_[0]);
  rec.phase(PhaseColumn::kOptimizer) = unionOf(cpu_sets_[kCpuOptimizer], &cpu_union_[0]);
  rec.phase(PhaseColumn::kCompute) = unionOf(cpu_sets_[kCpuCompute], &cpu_union_[0]);
  rec.phase(PhaseColumn::kCommTotal) = unionOf(cpu_sets_[kCpuComm], &cpu_union_[1]);
  // Exposed: waiting while no thread computed (a collective on a thread of its own that
  // overlaps another thread's forward is hidden, as a kernel's would be).
  rec.phase(PhaseColumn::kCommExposed) = differenceLength(cpu_union_[1], cpu_union_[0]);
  // No device: no idle device, launch gaps or bubbles to speak of.
  rec.phase(PhaseColumn::kGpuIdle) = 0;
  rec.phase(PhaseColumn::kLaunchGap) = 0;
  rec.phase(PhaseColumn::kBubble) = 0;
  return true;
}

void StepAssembler::addCollective(model::CollectiveOp op, uint64_t comm, uint64_t bytes, uint32_t peer, int64_t dur, int64_t wait_ns) {
  model::StepRecord& rec = record_;
  uint8_t size_class = model::sizeClassOf(bytes);
  model::FlatIndex::Key key{comm, static_cast<uint64_t>(op) | uint64_t{size_class} << 8 | uint64_t{peer} << 32};
  bool inserted = false;
  uint32_t idx = collective_index_.findOrInsert(key, static_cast<uint32_t>(rec.collectives.size()), &inserted);
  if (inserted) {
    model::CollectiveStat c;
    c.op = op, c.communicator = comm, c.size_class = size_class, c.peer_rank = peer;
    rec.collectives.push_back(c);
    wait_known_ns_.push_back(0);
  }
  model::CollectiveStat& c = rec.collectives[idx];
  ++c.count;
  c.bytes += bytes;
  c.total_ns += dur;
  if (wait_ns >= 0) {
    c.wait_ns = std::max<int64_t>(c.wait_ns, 0) + wait_ns;
    wait_known_ns_[idx] += dur;
  }
}

void StepAssembler::finishCollectiveWaits() {
  // An entry whose calls only partly said how long they waited (sampled proxy events):
  // its known waits, scaled to all its time.
  for (size_t i = 0; i < wait_known_ns_.size(); ++i) {
    model::CollectiveStat& c = record_.collectives[i];
    int64_t known = wait_known_ns_[i];
    if (known > 0 && c.wait_ns >= 0 && c.total_ns > known) {
      c.wait_ns = static_cast<int64_t>(static_cast<double>(c.total_ns) / static_cast<double>(known) * static_cast<double>(c.wait_ns) + 0.5);
    }
  }
}

void StepAssembler::spillBucket(uint32_t index, int32_t bucket) {
  bool inserted = false;
  const uint32_t at = spill_index_.findOrInsert({index, static_cast<uint64_t>(bucket)}, static_cast<uint32_t>(spills_.size()), &inserted);
  if (!inserted) {
    ++spills_[at].n;
    return;
  }
  StatAcc& acc = stat_accs_[index];
  spills_.push_back({bucket, 1, acc.spill_head});
  acc.spill_head = static_cast<uint32_t>(spills_.size());
}

void StepAssembler::orderKernelStats() {
  if (!new_cells_.empty()) {
    // Cell ids are slot * kPhaseSlots + phase: by signature, then phase.
    auto before = [this](uint32_t x, uint32_t y) {
      const uint64_t sx = slot_signatures_[x / kPhaseSlots], sy = slot_signatures_[y / kPhaseSlots];
      return sx != sy ? sx < sy : x % kPhaseSlots < y % kPhaseSlots;
    };
    std::sort(new_cells_.begin(), new_cells_.end(), before);
    merged_cells_.resize(cell_order_.size() + new_cells_.size());
    std::merge(cell_order_.begin(), cell_order_.end(), new_cells_.begin(), new_cells_.end(), merged_cells_.begin(), before);
    cell_order_.swap(merged_cells_);
    new_cells_.clear();
  }
  // One pass, without branches: the live cells' statistics in order; cells unused in the
  // last kListedFolds folds leave the list (foldKernelStat lists them again on their use).
  stat_order_.resize(cell_order_.size());
  size_t live = 0, kept = 0;
  for (const uint32_t id : cell_order_) {
    const uint32_t age = fold_stamp_ - stat_cells_[id].stamp;
    stat_order_[live] = id;
    live += age == 0;
    cell_order_[kept] = id;
    kept += age < kListedFolds;
  }
  cell_order_.resize(kept);
  assert(live == kernel_stats_ && "BUG: a live kernel statistic is not listed");
  stat_order_.resize(live);
}

void StepAssembler::finishKernelStats() {
  orderKernelStats();
  model::StepRecord& rec = record_;
  // Each position keeps its histogram's buffer from step to step; statistics past this
  // step's count keep theirs for later steps (a shrink would free them, and the next step
  // with more statistics allocate them again).
  for (; rec.kernels.size() > kernel_stats_; rec.kernels.pop_back()) spare_kernels_.push_back(std::move(rec.kernels.back()));
  while (rec.kernels.size() < kernel_stats_) {
    if (spare_kernels_.empty()) {
      rec.kernels.emplace_back();
    } else {
      rec.kernels.push_back(std::move(spare_kernels_.back()));
      spare_kernels_.pop_back();
    }
  }
  for (uint32_t out = 0; out < kernel_stats_; ++out) {
    const uint32_t cell = stat_order_[out];
    StatAcc& acc = stat_accs_[stat_cells_[cell].index];
    model::KernelStat& k = rec.kernels[out];
    k.signature = slot_signatures_[cell / kPhaseSlots];
    k.phase = static_cast<Phase>(cell % kPhaseSlots);
    k.total_ns = acc.total_ns;
    uint32_t count = 0;
    k.hist.refill([&](std::vector<model::DurationHistogram::Bucket>& h) {
      for (uint64_t m = acc.mask; m != 0; m &= m - 1) {
        const int offset = std::countr_zero(m);
        h.push_back({acc.base + offset, acc.counts[offset]});
        count += acc.counts[offset];
        acc.counts[offset] = 0;
      }
      if (acc.spill_head == 0) return true;
      // Buckets outside the window: distinct from its buckets and from each other.
      for (uint32_t j = acc.spill_head; j != 0; j = spills_[j - 1].next) {
        h.push_back({spills_[j - 1].bucket, spills_[j - 1].n});
        count += spills_[j - 1].n;
      }
      std::sort(h.begin(), h.end(), [](const auto& x, const auto& y) { return x.index < y.index; });
      return true;
    });
    k.count = count;
    acc.total_ns = 0, acc.spill_head = 0, acc.mask = 0;
    if (!options_.exact_kernel_totals) k.total_ns = k.hist.sketchTotal();
  }
  spills_.clear();
  spill_index_.clear();
}

}  // namespace argus::capture
