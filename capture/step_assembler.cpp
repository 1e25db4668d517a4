#include "capture/step_assembler.h"

#include <algorithm>
#include <utility>

namespace argus::capture {

namespace {

using model::Phase;
using model::PhaseColumn;

constexpr int64_t kMaxTimeNs = int64_t{1} << 62;
constexpr size_t kLaunchSlots = 1 << 12;  // direct-mapped correlation -> launch table
constexpr size_t kPruneEvery = 4096;      // orphan pruning cadence while no step is pending

const char* copyName(CopyKind kind, bool memset) {
  if (memset) return "[memset]";
  switch (kind) {
    case CopyKind::kHtoD: return "[memcpy HtoD]";
    case CopyKind::kDtoH: return "[memcpy DtoH]";
    case CopyKind::kDtoD: return "[memcpy DtoD]";
    case CopyKind::kHtoH: return "[memcpy HtoH]";
    case CopyKind::kPeer: return "[memcpy Peer]";
    case CopyKind::kUnknown: break;
  }
  return "[memcpy]";
}

}  // namespace

StepAssembler::StepAssembler(const NameTable& names, StepAssemblerOptions options, Callback on_step)
    : names_(names), options_(std::move(options)), on_step_(std::move(on_step)), detector_(options_.inference) {
  launches_.resize(kLaunchSlots, Launch{0, 0, 0});
  for (auto& row : copy_slots_) std::fill(std::begin(row), std::end(row), kNoSlot);
  next_step_ = options_.first_counted_step;
}

StepAssembler::NameInfo& StepAssembler::infoSlow(uint32_t name) {
  if (name >= names_.size()) name = 0;  // an id the table never gave: treat as unnamed
  if (name >= name_info_.size()) name_info_.resize(std::max<size_t>(name + 1, name_info_.size() * 2));
  NameInfo& ni = name_info_[name];
  if (!ni.known) {
    std::string_view text = names_.text(name);
    ni.known = true;
    if (auto step = options_.rules.stepMarker(text)) {
      ni.step_marker = true;
      ni.step_number = *step;
    }
    ni.range = options_.rules.classifyRange(text);
    ni.kernel = options_.rules.classifyKernel(text);
  }
  return ni;
}

bool StepAssembler::plausibleSlow(const TraceEvent& e) {
  if (e.start_ns < 0 || e.start_ns >= kMaxTimeNs) return false;
  bool spans = e.isGpuActivity() || e.type == EventType::kRange || e.type == EventType::kCollective;
  if (spans && (e.end_ns < e.start_ns || e.end_ns >= kMaxTimeNs || e.end_ns - e.start_ns > options_.max_event_ns)) return false;
  if (watermark_ != INT64_MIN && e.start_ns > watermark_ && e.start_ns - watermark_ > options_.max_clock_jump_ns) {
    // A lone leap far ahead is a garbage timestamp; a second event near it confirms it.
    bool confirmed = jump_candidate_ != INT64_MIN && e.start_ns >= jump_candidate_ - options_.max_clock_jump_ns &&
                     e.start_ns - jump_candidate_ <= options_.max_clock_jump_ns;
    jump_candidate_ = confirmed ? INT64_MIN : e.start_ns;
    return confirmed;
  }
  jump_candidate_ = INT64_MIN;
  return true;
}

void StepAssembler::drop(uint64_t* counter) {
  ++*counter;
  ++dropped_since_emit_;
}

void StepAssembler::onEvent(const TraceEvent& e) {
  ++stats_.events;
  if (!plausible(e)) {
    drop(&stats_.invalid_events);
    return;
  }
  if (e.start_ns > watermark_) advanceWatermark(e.start_ns);
  switch (e.type) {
    case EventType::kKernel:
    case EventType::kMemcpy:
    case EventType::kMemset:
    case EventType::kCollective:
      onActivity(e);
      break;
    case EventType::kLaunch:
      if (e.correlation != 0) launches_[e.correlation & (kLaunchSlots - 1)] = Launch{e.correlation, e.thread, e.start_ns};
      break;
    case EventType::kRangeBegin: {
      ThreadStack& st = stackOf(e.thread);
      if (static_cast<int>(st.open.size()) >= options_.max_range_depth) {
        ++st.overflow;
        ++stats_.range_depth_overflow;
        break;
      }
      st.open.push_back({e.name, e.start_ns});
      if (info(e.name).step_marker) onStepMarker(info(e.name), e.start_ns, kOpen, e.thread);
      break;
    }
    case EventType::kRangeEnd: {
      ThreadStack& st = stackOf(e.thread);
      if (st.overflow > 0) {
        --st.overflow;
        break;
      }
      if (st.open.empty()) {
        ++stats_.unmatched_range_ends;
        break;
      }
      OpenRange r = st.open.back();
      st.open.pop_back();
      int64_t end = std::max(e.start_ns, r.begin);
      if (info(r.name).step_marker) {
        // Close the step this push opened, unless a later marker already ended it.
        for (auto it = pending_.rbegin(); it != pending_.rend(); ++it) {
          if (it->begin != r.begin) continue;
          if (it->end == kOpen || it->end > end) it->end = end;
          break;
        }
      } else {
        onRange(r.name, r.begin, end, e.thread);
      }
      break;
    }
    case EventType::kRange: {
      const NameInfo& ni = info(e.name);
      if (ni.step_marker) {
        onStepMarker(ni, e.start_ns, e.end_ns, e.thread);
      } else {
        onRange(e.name, e.start_ns, e.end_ns, e.thread);
      }
      break;
    }
    case EventType::kMark:
      onMark(e);
      break;
    case EventType::kStackSample:
      if (e.start_ns < emitted_until_) {
        drop(&stats_.late_events);
      } else if (instants_.size() >= options_.max_buffered_events) {
        drop(&stats_.buffer_full);
      } else {
        instants_.push_back({e.start_ns, e.id, 0, true});
      }
      break;
  }
  maybeEmit();
}

StepAssembler::ThreadStack& StepAssembler::stackOf(uint32_t thread) {
  for (ThreadStack& st : stacks_) {
    if (st.thread == thread) return st;
  }
  stacks_.push_back({thread, 0, {}});
  stacks_.back().open.reserve(static_cast<size_t>(std::max(options_.max_range_depth, 0)));
  return stacks_.back();
}

uint64_t StepAssembler::copySignature(CopyKind kind, bool memset) {
  uint64_t& sig = copy_signatures_[memset ? 1 : 0][static_cast<int>(kind) % 6];
  if (sig == 0) sig = model::kernelSignature(copyName(kind, memset), {});
  return sig;
}

uint32_t StepAssembler::slotOf(uint64_t signature) {
  bool inserted = false;
  uint32_t slot = slot_index_.findOrInsert({signature, 0}, static_cast<uint32_t>(slot_index_.size()), &inserted);
  if (inserted) stat_cells_.resize(static_cast<size_t>(slot_index_.size()) * kPhaseSlots);
  return slot;
}

void StepAssembler::onActivity(const TraceEvent& e) {
  uint32_t thread = e.thread;
  int64_t launch = e.launch_ns;
  if (launch == kNoTime && e.correlation != 0) {
    const Launch& l = launches_[e.correlation & (kLaunchSlots - 1)];
    if (l.correlation == e.correlation) {
      launch = l.ts;
      if (thread == 0) thread = l.thread;
    }
  }
  // A launch after the work ended, or absurdly long before it, is a broken clock: ignore it.
  if (launch != kNoTime && (launch > e.end_ns || e.start_ns - launch > options_.max_event_ns)) launch = kNoTime;
  bool by_launch = markers_seen_ || !options_.infer_steps;
  int64_t key = (by_launch && launch != kNoTime) ? launch : e.start_ns;
  if (key < emitted_until_) {
    drop(&stats_.late_events);
    return;
  }
  if (acts_.size() >= options_.max_buffered_events) {
    drop(&stats_.buffer_full);
    partial_since_emit_ = true;
    return;
  }
  // Built in place (no copy of the record).
  Act& a = acts_.emplace_back();
  a.start = e.start_ns;
  a.end = e.end_ns;
  a.key = key;
  a.launch = launch;
  a.thread = thread;
  a.bytes = e.bytes;
  a.peer = e.peer;
  a.op = e.op;
  uint64_t signature = 0;
  std::string_view dict_name;
  switch (e.type) {
    case EventType::kKernel: {
      ++stats_.kernels;
      NameInfo& ni = info(e.name);
      signature = e.id != 0 ? e.id : model::kernelSignature(names_.text(e.name), e.geometry);
      a.kind = ni.kernel.communication ? ActKind::kComm : ActKind::kCompute;
      a.op = ni.kernel.op;
      a.name_phase = ni.kernel.phase;
      // The dictionary check and the slot lookup are skipped while a name keeps the
      // signature it had.
      if (ni.last_signature != signature) {
        ni.last_signature = signature;
        ni.last_slot = slotOf(signature);
        dict_name = names_.text(e.name);
      } else if (ni.last_slot == kNoSlot) {
        ni.last_slot = slotOf(signature);
      }
      a.slot = ni.last_slot;
      break;
    }
    case EventType::kMemcpy:
    case EventType::kMemset: {
      bool memset = e.type == EventType::kMemset;
      signature = copySignature(e.copy_kind, memset);
      uint32_t& slot = copy_slots_[memset ? 1 : 0][static_cast<int>(e.copy_kind) % 6];
      if (slot == kNoSlot) slot = slotOf(signature);
      a.slot = slot;
      a.kind = ActKind::kCopy;
      a.name_phase = Phase::kOther;
      dict_name = copyName(e.copy_kind, memset);
      break;
    }
    default:  // kCollective
      collective_events_seen_ = true;
      a.kind = ActKind::kCollective;
      a.id = e.id;
      break;
  }
  if (a.kind != ActKind::kCollective) {
    a.id = signature;
    if (dict_name.data() != nullptr) {
      bool inserted = false;
      seen_signatures_.findOrInsert({signature, 0}, 0, &inserted);
      if (inserted) {
        a.new_signature = true;
        new_kernels_.push_back({signature, model::normalizeKernelName(dict_name),
                                e.type == EventType::kKernel ? e.geometry : model::LaunchGeometry{}});
      }
    }
  }
  if (e.type == EventType::kKernel && options_.infer_steps && !markers_seen_) inferFrom(a, info(e.name).kernel);
  if (a.kind != ActKind::kCollective && a.end > device_end_) device_end_ = a.end;
  if (pending_.empty() && acts_.size() % kPruneEvery == 0 && (markers_seen_ || !options_.infer_steps || detector_.found())) {
    // No step is pending to claim old work: what the watermark has left behind is orphaned.
    int64_t horizon = watermark_ - options_.emit_lag_ns;
    size_t kept = 0;
    for (const Act& x : acts_) {
      if (x.end > horizon || (x.state == kPending && x.key >= horizon)) {
        acts_[kept++] = x;
      } else if (x.state == kPending) {
        ++stats_.outside_steps;
      }
    }
    acts_.resize(kept);
  }
}

void StepAssembler::inferFrom(const Act& a, const KernelClass& kc) {
  if (!detector_.found()) {
    int64_t gap = device_end_ == INT64_MIN ? 0 : a.start - device_end_;
    if (detector_.add(a.id, a.start, gap, kc.phase == Phase::kOptimizer)) {
      for (int64_t begin : detector_.anchorStarts()) openStep(next_step_++, begin, kOpen, 0, model::kStepInferred);
    } else if (detector_.windowFull()) {
      detector_.reset();  // no period in this window: learn again from here
    }
  } else if (a.id == detector_.anchor()) {
    openStep(next_step_++, a.start, kOpen, 0, model::kStepInferred);
  }
}

void StepAssembler::openStep(uint64_t step, int64_t begin, int64_t end, uint32_t thread, uint32_t flags) {
  if (begin < emitted_until_ || (!pending_.empty() && begin <= pending_.back().begin)) {
    ++stats_.bad_step_markers;  // inside an emitted step, or out of order
    return;
  }
  if (!pending_.empty()) {
    PendingStep& last = pending_.back();
    if (last.end == kOpen || last.end > begin) last.end = begin;
  }
  pending_.push_back({step, begin, end, thread, flags});
}

void StepAssembler::onStepMarker(const NameInfo& ni, int64_t begin, int64_t end, uint32_t thread) {
  markers_seen_ = true;
  uint64_t step = ni.step_number >= 0 ? static_cast<uint64_t>(ni.step_number) : next_step_;
  // A mark (end == begin) opens a step that the next marker ends.
  size_t before = pending_.size();
  openStep(step, begin, end == begin ? kOpen : end, thread, 0);
  if (pending_.size() > before) next_step_ = step + 1;
}

void StepAssembler::onRange(uint32_t name, int64_t begin, int64_t end, uint32_t thread) {
  RangeClass cls = info(name).range;
  if (cls == RangeClass::kNone) return;
  if (end <= emitted_until_) {
    drop(&stats_.late_events);
  } else if (ranges_.size() >= options_.max_buffered_events) {
    drop(&stats_.buffer_full);
  } else {
    ranges_.push_back({begin, end, thread, cls});
  }
}

void StepAssembler::onMark(const TraceEvent& e) {
  const NameInfo& ni = info(e.name);
  if (e.start_ns < emitted_until_) {
    drop(&stats_.late_events);
  } else if (ni.step_marker) {
    onStepMarker(ni, e.start_ns, e.start_ns, e.thread);
  } else if (instants_.size() >= options_.max_buffered_events) {
    drop(&stats_.buffer_full);
  } else {
    instants_.push_back({e.start_ns, 0, e.name < names_.size() ? e.name : 0, false});
  }
}

void StepAssembler::maybeEmitSlow() {
  while (!pending_.empty()) {
    const PendingStep& s = pending_.front();
    if (s.end == kOpen || watermark_ == INT64_MIN || watermark_ - options_.emit_lag_ns < s.end) return;
    PendingStep step = s;
    pending_.erase(pending_.begin());
    emit(step);
  }
}

void StepAssembler::flush() {
  while (!pending_.empty()) {
    PendingStep step = pending_.front();
    pending_.erase(pending_.begin());
    if (step.end == kOpen) {
      if (step.flags & model::kStepInferred) {
        ++stats_.open_steps_dropped;  // a partial iteration
        continue;
      }
      step.end = std::max(watermark_, step.begin);
      step.flags |= model::kStepPartial;
    }
    emit(step);
  }
  for (const Act& a : acts_) stats_.outside_steps += a.state == kPending;
  for (const Instant& i : instants_) stats_.outside_steps += i.sample;
  acts_.clear();
  ranges_.clear();
  instants_.clear();
}

void StepAssembler::emit(const PendingStep& s) {
  foldMembers(s);
  on_step_(StepOutput{record_, new_kernels_, new_strings_});
  ++stats_.steps_emitted;
  if (s.flags & model::kStepInferred) ++stats_.steps_inferred;
  new_kernels_.clear();
  new_strings_.clear();
  dropped_since_emit_ = 0;
  partial_since_emit_ = false;
  emitted_until_ = std::max(emitted_until_, s.end);
  pruneAfter(s.end);
}

void StepAssembler::pruneAfter(int64_t end) {
  // Consumed work that ends by `end` cannot touch a later step's window.
  size_t kept = 0;
  for (const Act& a : acts_) {
    if (a.state == kPending || a.end > end) acts_[kept++] = a;
  }
  acts_.resize(kept);
  kept = 0;
  for (const CpuRange& r : ranges_) {
    if (r.end > end) ranges_[kept++] = r;
  }
  ranges_.resize(kept);
  kept = 0;
  for (const Instant& i : instants_) {
    if (i.ts >= end) instants_[kept++] = i;
  }
  instants_.resize(kept);
}

}  // namespace argus::capture
