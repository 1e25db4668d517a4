#include "capture/step_assembler.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace argus::capture {

namespace {

using model::Phase;

constexpr size_t kLaunchSlots = 1 << 12;  // direct-mapped correlation -> launch table
constexpr size_t kOrphanCheckEvery = 4096;  // appends between orphan checks while no step is pending
constexpr size_t kFullPruneSlack = 4096;    // dead ranges tolerated behind a live one before a full pass

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

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Whether model::normalizeKernelName(name) == name: no whitespace at the ends and none but
// single spaces inside. Almost every kernel name is, and copying one is far cheaper than
// normalizing it a byte at a time.
bool normalizedAlready(std::string_view s) {
  const size_t n = s.size();
  if (n == 0) return true;
  if (isSpace(s.front()) || isSpace(s.back())) return false;
  // The back is no space, so a space always has a next byte.
  auto badIn = [&](size_t from, size_t to) {
    for (size_t j = from; j < to; ++j) {
      if (isSpace(s[j]) && (s[j] != ' ' || isSpace(s[j + 1]))) return true;
    }
    return false;
  };
  // 8 bytes at a time: exact per-byte "below c" flags (0x80 in each byte that is), so the
  // common word (letters and single spaces) costs a dozen operations.
  constexpr uint64_t kHigh = 0x8080808080808080ull, kOnes = 0x0101010101010101ull;
  auto below = [](uint64_t w, unsigned char c) { return ~((w | kHigh) - kOnes * c) & ~w & kHigh; };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    uint64_t spaces = below(w, 0x21);  // bytes <= ' ': spaces, unless a control byte is there
    if (spaces == 0) continue;
    if (below(w, 0x20) != 0) {
      if (badIn(i, i + 8)) return false;  // a control byte: maybe \t \n \v \f \r
      continue;
    }
    // Two spaces side by side (in either byte order), or one ending the word before another.
    if ((spaces & (spaces >> 8)) != 0) return false;
    if (s[i + 7] == ' ' && isSpace(s[i + 8])) return false;
  }
  return !badIn(i, n);
}

std::string dictionaryName(std::string_view name) {
  return normalizedAlready(name) ? std::string(name) : model::normalizeKernelName(name);
}

int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? (b > 0 ? INT64_MAX : INT64_MIN) : out;
}

StepAssemblerOptions bounded(StepAssemblerOptions options) {
  options.max_buffered_events = std::min<size_t>(options.max_buffered_events, UINT32_MAX - 1);
  return options;
}

}  // namespace

StepAssembler::StepAssembler(const NameTable& names, StepAssemblerOptions options, Callback on_step)
    : names_(names), options_(bounded(std::move(options))), classifier_(options_.rules), on_step_(std::move(on_step)), detector_(options_.inference) {
  launches_.resize(kLaunchSlots, Launch{0, 0, 0});
  for (auto& row : copy_slots_) std::fill(std::begin(row), std::end(row), kNoSlot);
  next_step_ = options_.first_counted_step;
  keys_by_start_ = options_.infer_steps;
  next_orphan_check_ = kOrphanCheckEvery;
  if (options_.max_event_ns >= 0 && options_.max_clock_jump_ns >= 0) {
    fast_jump_ = std::min(static_cast<uint64_t>(options_.max_clock_jump_ns), kMaxTimeNs) + 1;
    fast_cap_ = kMaxTimeNs - std::min(static_cast<uint64_t>(options_.max_event_ns), kMaxTimeNs);
  }
}

StepAssembler::NameInfo& StepAssembler::entry(uint32_t name) {
  if (name >= names_.size()) name = 0;  // an id the table never gave: treat as unnamed
  if (name >= name_info_.size()) name_info_.resize(std::max<size_t>(name + 1, name_info_.size() * 2));
  return name_info_[name];
}

StepAssembler::NameInfo& StepAssembler::kernelInfoSlow(uint32_t name) {
  NameInfo& ni = entry(name);
  if (!ni.kernel_known) {
    ni.kernel_known = true;
    ni.kernel = classifier_.classifyKernel(names_.text(name));
  }
  return ni;
}

StepAssembler::NameInfo& StepAssembler::rangeInfoSlow(uint32_t name) {
  NameInfo& ni = entry(name);
  if (!ni.range_known) {
    std::string_view text = names_.text(name);
    ni.range_known = true;
    ni.range = classifier_.classifyRange(text);
    if (auto step = classifier_.stepMarker(text)) {
      ni.range_use = RangeUse::kStepMarker;
      ni.step_number = *step;
    } else {
      ni.range_use = classifier_.isCommRange(text)        ? RangeUse::kKeepComm
                     : ni.range == RangeClass::kNone ? RangeUse::kIgnore
                                                     : RangeUse::kKeep;
    }
  }
  return ni;
}

bool StepAssembler::plausibleSlow(const TraceEvent& e) {
  if (e.start_ns < 0 || static_cast<uint64_t>(e.start_ns) >= kMaxTimeNs) return false;
  bool spans = e.isGpuActivity() || e.type == EventType::kRange || e.type == EventType::kCollective;
  if (spans && (e.end_ns < e.start_ns || static_cast<uint64_t>(e.end_ns) >= kMaxTimeNs || e.end_ns - e.start_ns > options_.max_event_ns)) {
    return false;
  }
  bool ok = true;
  if (watermark_ != INT64_MIN && e.start_ns > watermark_ && e.start_ns - watermark_ > options_.max_clock_jump_ns) {
    // A lone leap far ahead is a garbage timestamp; a second event near it confirms it.
    bool confirmed = jump_candidate_ != INT64_MIN && e.start_ns >= jump_candidate_ - options_.max_clock_jump_ns &&
                     e.start_ns - jump_candidate_ <= options_.max_clock_jump_ns;
    jump_candidate_ = confirmed ? INT64_MIN : e.start_ns;
    ok = confirmed;
  } else {
    jump_candidate_ = INT64_MIN;
  }
  // The watermark this event leaves (it is updated after this check); no fast path while a
  // jump awaits confirmation.
  int64_t base = ok ? std::max(watermark_, e.start_ns) : watermark_;
  fast_starts_ = base == INT64_MIN || jump_candidate_ != INT64_MIN ? 0 : std::min(static_cast<uint64_t>(base) + fast_jump_, fast_cap_);
  return ok;
}

void StepAssembler::drop(uint64_t* counter) {
  ++*counter;
  ++dropped_since_emit_;
}

// The per-activity path, forced inline (GCC's -O2 heuristics keep these out of line, a call
// or three per kernel): resolve the launch and the step key, then append.
[[gnu::always_inline]] inline bool StepAssembler::admit(const TraceEvent& e, Admitted* out) {
  int64_t launch = e.launch_ns;
  uint32_t thread = e.thread;
  if (launch == kNoTime && e.correlation != 0) {
    const Launch& l = launches_[e.correlation & (kLaunchSlots - 1)];
    if (l.correlation == e.correlation) {
      launch = l.ts;
      if (thread == 0) thread = l.thread;
    }
  }
  // A launch after the work ended, or absurdly long before it, is a broken clock: ignore it.
  if (launch != kNoTime && (launch > e.end_ns || launch < e.start_ns - options_.max_event_ns)) launch = kNoTime;
  bool by_launch = !keys_by_start_ && launch != kNoTime;
  int64_t key = by_launch ? launch : e.start_ns;
  if (key < emitted_until_) {
    drop(&stats_.late_events);
    return false;
  }
  if (acts_.size() >= options_.max_buffered_events && (pruneDead(), acts_.size() >= options_.max_buffered_events)) {
    drop(&stats_.buffer_full);
    partial_since_emit_ = true;
    return false;
  }
  *out = {launch, thread, static_cast<uint8_t>(by_launch ? kKeyIsLaunch : 0)};
  return true;
}

// Writes the fields in place (an Act temporary would be built and copied).
[[gnu::always_inline]] inline StepAssembler::Act& StepAssembler::pushAct(const TraceEvent& e, const Admitted& g, uint64_t id, uint32_t slot,
                                                                         ActKind kind, Phase name_phase, model::CollectiveOp op, uint8_t flags) {
  Act& a = acts_.emplace();
  a.start = e.start_ns;
  a.end = e.end_ns;
  a.launch = g.launch;
  a.id = id;
  a.bytes = e.bytes;
  a.slot = slot;
  a.thread = g.thread;
  a.peer = e.peer;
  a.device = e.device;
  a.stream = e.stream;
  a.kind = kind;
  a.name_phase = name_phase;
  a.op = op;
  a.flags = flags;
  return a;
}

[[gnu::always_inline]] inline void StepAssembler::appended(const Act& a) {
  if (a.start < last_act_start_) acts_sorted_ = false;
  last_act_start_ = a.start;
  if (a.flags & kKeyIsLaunch) {
    max_lead_ = std::max(max_lead_, a.start - a.launch);
  } else if (a.launch != kNoTime) {
    start_keyed_lead_ = std::max(start_keyed_lead_, a.start - a.launch);
    start_keyed_lag_ = std::max(start_keyed_lag_, a.launch - a.start);
  }
  if (acts_.size() >= next_orphan_check_) pruneOrphans();
}

// Forced inline (with the per-activity path inlined into it) into onEvents' loop, where it
// saves a call and the prologue of a function this size per kernel (~20 instructions).
[[gnu::always_inline]] inline void StepAssembler::bufferKernel(const TraceEvent& e) {
  Admitted g;
  if (!admit(e, &g)) return;
  ++stats_.kernels;
  NameInfo& ni = kernelInfo(e.name);
  uint64_t signature = e.id != 0 ? e.id : model::kernelSignature(names_.text(e.name), e.geometry);
  uint8_t flags = g.flags;
  uint32_t slot = kernelSlot(signature, e, &flags);
  const Act& a = pushAct(e, g, signature, slot, ni.kernel.communication ? ActKind::kComm : ActKind::kCompute, ni.kernel.phase, ni.kernel.op, flags);
  if (keys_by_start_) {
    inferFrom(a, ni.kernel);
    device_end_ = std::max(device_end_, a.end);
  }
  appended(a);
}

[[gnu::noinline]] void StepAssembler::onKernel(const TraceEvent& e) { bufferKernel(e); }

// Forced inline into onEvent and onEvents' loop.
template <bool kBatch>
[[gnu::always_inline]] inline void StepAssembler::take(const TraceEvent& e) {
  if (!plausible(e)) {
    drop(&stats_.invalid_events);
    return;
  }
  watermark_ = std::max(watermark_, e.start_ns);
  // Launches and CPU ranges of no use (most of a profiler trace's CPU events) are handled
  // here; the rest in handlers of their own. The three common types are tested before the
  // switch: a profiler trace interleaves them irregularly, which a jump table's one
  // indirect branch predicts worse than two conditional ones.
  if (e.type == EventType::kKernel) {
    if constexpr (kBatch) {
      bufferKernel(e);
    } else {
      onKernel(e);
    }
  } else if (e.type == EventType::kRange) {
    const NameInfo& ni = rangeInfo(e.name);
    if (ni.range_use != RangeUse::kIgnore) onCompleteRange(ni, e);
  } else if (e.type == EventType::kLaunch) {
    if (e.correlation != 0) launches_[e.correlation & (kLaunchSlots - 1)] = Launch{e.correlation, e.thread, e.start_ns};
  } else {
    switch (e.type) {
      case EventType::kMemcpy:
      case EventType::kMemset:
        onCopy(e);
        break;
      case EventType::kCollective:
        onCollective(e);
        break;
      case EventType::kRangeBegin:
        onRangeBegin(e);
        break;
      case EventType::kRangeEnd:
        onRangeEnd(e);
        break;
      case EventType::kMark:
        onMark(e);
        break;
      case EventType::kStackSample:
        onSample(e);
        break;
      case EventType::kKernel:
      case EventType::kRange:
      case EventType::kLaunch:
        break;  // above
    }
  }
  if (watermark_ >= emit_at_) emitDue();
}

void StepAssembler::onEvent(const TraceEvent& e) {
  ++stats_.events;
  take<false>(e);
}

void StepAssembler::onEvents(std::span<const TraceEvent> events) {
  stats_.events += events.size();
  for (const TraceEvent& e : events) take<true>(e);
}

void StepAssembler::onCompleteRange(const NameInfo& ni, const TraceEvent& e) {
  if (ni.range_use == RangeUse::kStepMarker) {
    onStepMarker(ni, e.start_ns, e.end_ns, e.thread);
  } else {
    onRange(ni.range, ni.range_use == RangeUse::kKeepComm, e.start_ns, e.end_ns, e.thread);
  }
}

uint32_t StepAssembler::kernelSlotSlow(SlotCacheEntry* c, uint64_t signature, const TraceEvent& e, uint8_t* flags) {
  bool inserted = false;
  uint32_t slot = slotOf(signature, &inserted);
  // Signature 0 (no real kernel's) never enters the dictionary.
  if (inserted && signature != 0) {
    *flags |= kNewSignature;
    new_kernels_.push_back({signature, dictionaryName(names_.text(e.name)), e.geometry});
  }
  *c = {signature, slot};
  return slot;
}

void StepAssembler::onCopy(const TraceEvent& e) {
  Admitted g;
  if (!admit(e, &g)) return;
  bool memset = e.type == EventType::kMemset;
  uint64_t signature = copySignature(e.copy_kind, memset);
  uint32_t& slot = copy_slots_[memset ? 1 : 0][static_cast<int>(e.copy_kind) % 6];
  uint8_t flags = g.flags;
  if (slot == kNoSlot) {
    bool inserted = false;
    slot = slotOf(signature, &inserted);
    if (inserted) {
      flags |= kNewSignature;
      new_kernels_.push_back({signature, copyName(e.copy_kind, memset), model::LaunchGeometry{}});
    }
  }
  const Act& a = pushAct(e, g, signature, slot, ActKind::kCopy, Phase::kOther, e.op, flags);
  if (keys_by_start_) device_end_ = std::max(device_end_, a.end);
  appended(a);
}

void StepAssembler::onCollective(const TraceEvent& e) {
  Admitted g;
  if (!admit(e, &g)) return;
  collective_events_seen_ = true;
  appended(pushAct(e, g, e.id, waitSlot(e), ActKind::kCollective, Phase::kUnknown, e.op, g.flags));
}

void StepAssembler::pruneOrphans() {
  next_orphan_check_ = acts_.size() + kOrphanCheckEvery;
  if (!pending_.empty() || (keys_by_start_ && !detector_.found())) return;
  // No step is pending to claim old work: what the watermark has left behind is orphaned.
  int64_t horizon = watermark_ - options_.emit_lag_ns;
  size_t kept = 0, consumed_end = 0;
  for (size_t i = 0; i < acts_.size(); ++i) {
    const Act& x = acts_[i];
    bool pending = !(x.flags & kConsumed);
    if (x.end > horizon || (pending && x.key() >= horizon)) {
      acts_[kept++] = x;
      if (!pending) consumed_end = kept;
    } else if (pending) {
      ++stats_.outside_steps;
    }
  }
  acts_.shrink(kept);
  consumed_end_ = consumed_end;
  next_orphan_check_ = kept + kOrphanCheckEvery;
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

uint32_t StepAssembler::slotOf(uint64_t signature, bool* inserted) {
  uint32_t slot = slot_index_.findOrInsert({signature, 0}, static_cast<uint32_t>(slot_index_.size()), inserted);
  if (*inserted) {
    stat_cells_.resize(static_cast<size_t>(slot_index_.size()) * kPhaseSlots);
    slot_signatures_.push_back(signature);
  }
  return slot;
}

void StepAssembler::onRangeBegin(const TraceEvent& e) {
  ThreadStack& st = stackOf(e.thread);
  if (static_cast<int>(st.open.size()) >= options_.max_range_depth) {
    ++st.overflow;
    ++stats_.range_depth_overflow;
    return;
  }
  st.open.push_back({e.name, e.start_ns});
  const NameInfo& ni = rangeInfo(e.name);
  if (ni.range_use == RangeUse::kStepMarker) onStepMarker(ni, e.start_ns, kOpen, e.thread);
}

void StepAssembler::onRangeEnd(const TraceEvent& e) {
  ThreadStack& st = stackOf(e.thread);
  if (st.overflow > 0) {
    --st.overflow;
    return;
  }
  if (st.open.empty()) {
    ++stats_.unmatched_range_ends;
    return;
  }
  OpenRange r = st.open.back();
  st.open.pop_back();
  int64_t end = std::max(e.start_ns, r.begin);
  const NameInfo& ni = rangeInfo(r.name);
  if (ni.range_use == RangeUse::kStepMarker) {
    // Close the step this push opened, unless a later marker already ended it.
    for (auto it = pending_.rbegin(); it != pending_.rend(); ++it) {
      if (it->begin != r.begin) continue;
      if (it->end == kOpen || it->end > end) it->end = end;
      break;
    }
    updateEmitAt();
  } else if (ni.range_use != RangeUse::kIgnore) {
    onRange(ni.range, ni.range_use == RangeUse::kKeepComm, r.begin, end, e.thread);
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
  updateEmitAt();
}

void StepAssembler::onStepMarker(const NameInfo& ni, int64_t begin, int64_t end, uint32_t thread) {
  markers_seen_ = true;
  keys_by_start_ = false;
  uint64_t step = ni.step_number >= 0 ? static_cast<uint64_t>(ni.step_number) : next_step_;
  // A mark (end == begin) opens a step that the next marker ends.
  size_t before = pending_.size();
  openStep(step, begin, end == begin ? kOpen : end, thread, 0);
  if (pending_.size() > before) next_step_ = step + 1;
}

void StepAssembler::onRange(RangeClass cls, bool comm, int64_t begin, int64_t end, uint32_t thread) {
  if (end <= emitted_until_) {
    drop(&stats_.late_events);
    return;
  }
  if (ranges_.size() >= options_.max_buffered_events && (pruneDead(), ranges_.size() >= options_.max_buffered_events)) {
    drop(&stats_.buffer_full);
    return;
  }
  if (!ranges_.empty() && begin < ranges_.back().begin) ranges_sorted_ = false;
  ranges_.append({begin, end, thread, cls, comm});
  if (end > begin && phaseOfRange(cls) != Phase::kUnknown) {
    auto it = std::find_if(phase_threads_.begin(), phase_threads_.end(), [&](const PhaseThread& p) { return p.thread == thread; });
    if (it == phase_threads_.end()) {
      phase_threads_.push_back({thread, end});
    } else if (end > it->last_end) {
      it->last_end = end;
    }
  }
}

void StepAssembler::onMark(const TraceEvent& e) {
  const NameInfo& ni = rangeInfo(e.name);
  if (e.start_ns < emitted_until_) {
    drop(&stats_.late_events);
  } else if (ni.range_use == RangeUse::kStepMarker) {
    onStepMarker(ni, e.start_ns, e.start_ns, e.thread);
  } else if (instants_.size() >= options_.max_buffered_events) {
    drop(&stats_.buffer_full);
  } else {
    instants_.push_back({e.start_ns, 0, e.name < names_.size() ? e.name : 0, false});
  }
}

void StepAssembler::onSample(const TraceEvent& e) {
  if (e.start_ns < emitted_until_) {
    drop(&stats_.late_events);
  } else if (instants_.size() >= options_.max_buffered_events) {
    drop(&stats_.buffer_full);
  } else {
    instants_.push_back({e.start_ns, e.id, 0, true});
  }
}

void StepAssembler::updateEmitAt() {
  emit_at_ = pending_.empty() || pending_.front().end == kOpen ? INT64_MAX : saturatingAdd(pending_.front().end, options_.emit_lag_ns);
}

void StepAssembler::emitDue() {
  while (!pending_.empty()) {
    const PendingStep& s = pending_.front();
    if (s.end == kOpen || watermark_ == INT64_MIN || watermark_ - options_.emit_lag_ns < s.end) break;
    PendingStep step = s;
    pending_.erase(pending_.begin());
    emit(step);
  }
  updateEmitAt();
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
  updateEmitAt();
  for (const Act& a : acts_) stats_.outside_steps += !(a.flags & kConsumed);
  for (const Instant& i : instants_) stats_.outside_steps += i.sample;
  acts_.clear();
  consumed_end_ = 0;
  acts_sorted_ = true;
  last_act_start_ = INT64_MIN;
  max_lead_ = start_keyed_lead_ = start_keyed_lag_ = 0;
  next_orphan_check_ = kOrphanCheckEvery;
  ranges_.clear();
  ranges_live_after_prune_ = 0;
  ranges_sorted_ = true;
  phase_threads_.clear();
  instants_.clear();
}

void StepAssembler::pruneDead() {
  // The buffer bound counts what the assembler still needs, not entries it has not pruned yet.
  if (dead_ranges_) pruneAfter(emitted_until_, true);
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
  pruneAfter(emitted_until_);
}

// Consumed work that ends by `end` cannot touch a later step's window. Those activities all
// lie in [0, consumed_end_): the live ones there close up against consumed_end_, in order,
// and the front, all dead, is dropped in O(1) (AppendBuffer::erasePrefix). The pass costs
// about the step's own work, never the buffer, and leaves no dead activity.
void StepAssembler::pruneActs(int64_t end) {
  Act* const v = acts_.begin();
  size_t kept_from = consumed_end_;
  for (size_t i = consumed_end_; i-- > 0;) {
    if ((v[i].flags & kConsumed) && v[i].end <= end) continue;
    if (--kept_from != i) v[kept_from] = v[i];
  }
  acts_.erasePrefix(kept_from);
  consumed_end_ -= kept_from;
}

// A range that ends by `end` is dead. Ranges end in any order, so only the dead prefix
// goes at once; every dead range goes with `full`, or once the live part has doubled since
// the last full pass if dead ranges can hide behind the first live one (in begin order that
// needs a first live range that began before `end`: ranges behind one that began later
// began later too, so they end after `end`). Each range is moved O(1) times on average.
void StepAssembler::pruneRanges(int64_t end, bool full) {
  CpuRange* const v = ranges_.begin();
  const size_t n = ranges_.size();
  size_t h = 0;
  while (h < n && v[h].end <= end) ++h;
  const size_t live = n - h;
  const bool may_hide = live > 0 && (!ranges_sorted_ || v[h].begin < end);
  if (full || (may_hide && live > 2 * ranges_live_after_prune_ + kFullPruneSlack)) {
    size_t kept = 0;
    for (size_t i = h; i < n; ++i) {
      if (v[i].end > end) v[kept++] = v[i];
    }
    ranges_.shrink(kept);
    ranges_live_after_prune_ = kept;
  } else {
    ranges_.erasePrefix(h);  // O(1): the space is reclaimed when an append needs it
  }
  dead_ranges_ = !full;
}

void StepAssembler::pruneAfter(int64_t end, bool full) {
  pruneActs(end);
  pruneRanges(end, full);
  if (acts_.empty()) {
    acts_sorted_ = true;
    last_act_start_ = INT64_MIN;
    max_lead_ = start_keyed_lead_ = start_keyed_lag_ = 0;
  }
  if (ranges_.empty()) ranges_sorted_ = true;
  next_orphan_check_ = std::min(next_orphan_check_, acts_.size() + kOrphanCheckEvery);
  size_t kept = 0;
  for (const Instant& i : instants_) {
    if (i.ts >= end) instants_[kept++] = i;
  }
  instants_.resize(kept);
}

}  // namespace argus::capture
