// StepAssembler: folds a stream of TraceEvents into one model::StepRecord per training
// step (DESIGN.md §3; every field is defined in docs/capture/step-assembler.md).
//
// Events are fed in roughly time order. onEvent() only validates and appends to reused
// buffers (no allocation in steady state, no strings); the arithmetic runs once per step,
// when the step is emitted: exact interval unions by sort-and-sweep, phase attribution by
// the CPU ranges around each kernel's launch, kernel and collective statistics.
//
// Steps come from markers (NameRules::steps: `ProfilerStep#N`, `argus:step`), or, when a
// stream has none, are inferred from the repeating kernel sequence (StepPeriodDetector;
// records then carry model::kStepInferred). A kernel belongs to the step whose range
// contains its launch time (launch_ns, or the kLaunch event with its correlation id);
// when the launch is unknown, or steps are inferred, its GPU start. A step is emitted
// once the stream's watermark (the latest event time seen) is `emit_lag_ns` past its end,
// or on flush(). Events older than the last emitted step are late: dropped and counted.
//
// Not thread-safe: one thread feeds one assembler (one per rank). The callback runs on
// that thread, inside onEvent() or flush().
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "capture/interval_math.h"
#include "capture/name_rules.h"
#include "capture/name_table.h"
#include "capture/phase_timeline.h"
#include "capture/step_period_detector.h"
#include "capture/trace_event.h"
#include "model/flat_index.h"
#include "model/step_record.h"

namespace argus::capture {

struct StepAssemblerOptions {
  uint32_t rank = 0;
  uint16_t attempt = 0;
  NameRules rules = NameRules::defaults();
  // A step is emitted once the watermark passes its end by this much: it must exceed how
  // late GPU records arrive after the CPU events (CUPTI buffer flush interval).
  int64_t emit_lag_ns = 2'000'000'000;
  // Infer steps from the kernel sequence while no step marker has been seen.
  bool infer_steps = true;
  PeriodDetectorOptions inference;
  uint64_t first_counted_step = 0;  // step number of the first counted / inferred step
  // Bounds: buffered GPU activities and CPU ranges (beyond: events dropped and counted),
  // marker events kept per record, nesting depth of push/pop ranges per thread.
  size_t max_buffered_events = 1 << 21;
  size_t max_markers_per_step = 64;
  int max_range_depth = 128;
  // Plausibility: an event lasting longer, or with a time outside [0, 2^62), is invalid;
  // a lone event more than max_clock_jump_ns ahead of the watermark is invalid unless the
  // next event confirms the jump.
  int64_t max_event_ns = 3'600'000'000'000;
  int64_t max_clock_jump_ns = 3'600'000'000'000;
};

// Counters since construction. Dropped events are also reported in-band: the next record
// carries an EventKind::kDroppedEvents event (late + invalid + buffer_full since the
// previous record).
struct AssemblerStats {
  uint64_t events = 0;
  uint64_t kernels = 0;           // GPU kernels accepted
  uint64_t steps_emitted = 0;
  uint64_t steps_inferred = 0;
  uint64_t late_events = 0;       // older than the last emitted step
  uint64_t invalid_events = 0;    // absurd times or durations
  uint64_t buffer_full = 0;       // dropped at max_buffered_events
  uint64_t outside_steps = 0;     // GPU work / samples that fell in no step (before the first, between steps)
  uint64_t unmatched_range_ends = 0;
  uint64_t range_depth_overflow = 0;
  uint64_t markers_dropped = 0;   // beyond max_markers_per_step
  uint64_t bad_step_markers = 0;  // a step marker that begins inside an emitted step
  uint64_t open_steps_dropped = 0;  // inferred steps still open at flush()
};

// What one emitted step hands out. The record and the spans are valid during the
// callback only (buffers are reused). new_kernels / new_strings: dictionary entries first
// referenced by this record, to register with the sender before the record.
struct StepOutput {
  const model::StepRecord& record;
  std::span<const model::KernelDictEntry> new_kernels;
  std::span<const model::StringDictEntry> new_strings;
};

class StepAssembler {
 public:
  using Callback = std::function<void(const StepOutput&)>;

  // `names` must outlive the assembler; it is read when a new name id is first seen.
  StepAssembler(const NameTable& names, StepAssemblerOptions options, Callback on_step);

  // Folds one event. Never throws; bad input is counted (stats()), never fatal.
  void onEvent(const TraceEvent& e);
  // Emits every pending step: steps whose end is known as they are; a marker step still
  // open ends at the watermark and is flagged kStepPartial; an open inferred step (a
  // partial iteration) is dropped. The assembler stays usable.
  void flush();

  const AssemblerStats& stats() const { return stats_; }
  int64_t watermark() const { return watermark_; }
  bool inferring() const { return !markers_seen_ && detector_.found(); }

 private:
  static constexpr int64_t kOpen = INT64_MAX;
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  static constexpr uint32_t kPhaseSlots = 8;  // model::Phase values, rounded up

  // Per-name-id facts, computed once per distinct name.
  struct NameInfo {
    bool known = false;
    bool step_marker = false;
    int64_t step_number = -1;  // -1: counted
    RangeClass range = RangeClass::kNone;
    KernelClass kernel;
    uint64_t last_signature = 0;  // the signature this name had last (skips the dictionary check)
    uint32_t last_slot = kNoSlot;  // slot of last_signature (kNoSlot: not looked up yet)
  };
  enum class ActKind : uint8_t { kCompute, kComm, kCopy, kCollective };
  enum ActState : uint8_t { kPending = 0, kConsumed = 1 };
  // A GPU activity or collective awaiting its step.
  struct Act {
    int64_t start, end, key, launch;
    uint64_t id;     // signature (kernels, copies) or communicator (collectives)
    uint64_t bytes;
    uint32_t slot;   // kernels, copies: dense session id of the signature (slotOf)
    uint32_t thread, peer;
    ActKind kind;
    model::Phase name_phase;  // compute kernels: the phase of the kernel-name class
    model::CollectiveOp op;
    uint8_t state;
    bool new_signature;
  };
  struct PendingStep {
    uint64_t step;
    int64_t begin, end;  // end == kOpen until known
    uint32_t thread;     // thread of the marker (default for kernels of unknown thread)
    uint32_t flags;
  };
  struct OpenRange {
    uint32_t name;
    int64_t begin;
  };
  struct ThreadStack {
    uint32_t thread;
    int overflow;  // pushes beyond max_range_depth not stored
    std::vector<OpenRange> open;
  };
  struct Instant {
    int64_t ts;
    uint64_t value;  // stack id for samples
    uint32_t name;   // mark name (0 for samples)
    bool sample;
  };
  struct Launch {
    uint32_t correlation;
    uint32_t thread;
    int64_t ts;
  };

  // Computed on first sight of the id (infoSlow), then a vector lookup.
  NameInfo& info(uint32_t name) {
    if (name < name_info_.size() && name_info_[name].known) return name_info_[name];
    return infoSlow(name);
  }
  NameInfo& infoSlow(uint32_t name);
  // Most events are in order and in range: checked inline; the rest in plausibleSlow.
  bool plausible(const TraceEvent& e) {
    constexpr uint64_t kMaxTime = uint64_t{1} << 62;
    constexpr uint32_t kSpans = 1u << static_cast<int>(EventType::kKernel) | 1u << static_cast<int>(EventType::kMemcpy) |
                                1u << static_cast<int>(EventType::kMemset) | 1u << static_cast<int>(EventType::kRange) |
                                1u << static_cast<int>(EventType::kCollective);
    if (static_cast<uint64_t>(e.start_ns) >= kMaxTime || e.start_ns > jump_limit_ || jump_candidate_ != INT64_MIN) return plausibleSlow(e);
    if ((kSpans >> static_cast<int>(e.type)) & 1u) {
      return static_cast<uint64_t>(e.end_ns) < kMaxTime && e.end_ns >= e.start_ns && e.end_ns - e.start_ns <= options_.max_event_ns;
    }
    return true;
  }
  bool plausibleSlow(const TraceEvent& e);
  void advanceWatermark(int64_t t) {
    watermark_ = t;
    // start <= jump_limit_ proves an event is no clock jump (see plausibleSlow).
    int64_t jump = options_.max_clock_jump_ns;
    jump_limit_ = jump < 0 ? INT64_MIN : (t > INT64_MAX - jump ? INT64_MAX : t + jump);
  }
  void drop(uint64_t* counter);
  void onActivity(const TraceEvent& e);
  void onRange(uint32_t name, int64_t begin, int64_t end, uint32_t thread);
  void onStepMarker(const NameInfo& ni, int64_t begin, int64_t end, uint32_t thread);
  void onMark(const TraceEvent& e);
  void openStep(uint64_t step, int64_t begin, int64_t end, uint32_t thread, uint32_t flags);
  void inferFrom(const Act& a, const KernelClass& kc);
  void maybeEmit() {
    if (!pending_.empty() && pending_.front().end != kOpen) maybeEmitSlow();
  }
  void maybeEmitSlow();
  void emit(const PendingStep& s);
  void foldMembers(const PendingStep& s);
  void pruneAfter(int64_t end);
  ThreadStack& stackOf(uint32_t thread);
  uint64_t copySignature(CopyKind kind, bool memset);
  uint32_t slotOf(uint64_t signature);

  const NameTable& names_;
  const StepAssemblerOptions options_;
  Callback on_step_;
  AssemblerStats stats_;

  std::vector<NameInfo> name_info_;
  std::vector<Act> acts_;
  std::vector<CpuRange> ranges_;
  std::vector<Instant> instants_;
  std::vector<PendingStep> pending_;
  std::vector<ThreadStack> stacks_;
  std::vector<Launch> launches_;  // direct-mapped by correlation id

  int64_t watermark_ = INT64_MIN;
  int64_t emitted_until_ = INT64_MIN;  // end of the last emitted step
  int64_t jump_candidate_ = INT64_MIN;
  int64_t jump_limit_ = INT64_MAX;     // see advanceWatermark
  int64_t device_end_ = INT64_MIN;     // latest GPU end seen (idle gap for inference)
  bool markers_seen_ = false;
  bool collective_events_seen_ = false;
  uint64_t next_step_ = 0;
  uint64_t dropped_since_emit_ = 0;
  bool partial_since_emit_ = false;
  StepPeriodDetector detector_;

  // Session dictionaries.
  model::FlatIndex seen_signatures_;
  std::vector<bool> string_sent_;
  std::vector<model::KernelDictEntry> new_kernels_;
  std::vector<model::StringDictEntry> new_strings_;
  uint64_t copy_signatures_[2][6] = {};
  uint32_t copy_slots_[2][6];
  // Signature -> slot: dense ids so that the per-step fold finds a kernel's statistics by
  // direct indexing (stat_cells_[slot * kPhaseSlots + phase]) instead of hashing.
  model::FlatIndex slot_index_;

  // Per-emit scratch, reused.
  model::StepRecord record_;
  std::vector<Interval> busy_, compute_all_, comm_, scratch_, merged_, mb_gaps_;
  std::vector<int64_t> busy_launch_;  // launch of the activity that opens busy_[i]
  PhaseTimelines timelines_;
  model::FlatIndex collective_index_, stack_index_;
  // Per-fold kernel statistics index: a cell is live when its stamp is fold_stamp_.
  struct StatCell {
    uint32_t stamp = 0;
    uint32_t index = 0;
  };
  std::vector<StatCell> stat_cells_;
  uint32_t fold_stamp_ = 0;
  // Durations of each kernel statistic folded in runs per histogram bucket (two runs per
  // statistic; DurationHistogram::add once per run, not per kernel): the histogram is a
  // multiset of bucket counts, so the result is the same.
  struct HistRun {
    uint64_t lo = 0, hi = 0;  // the bucket's durations [lo, hi); lo == hi: no run
    int64_t dur = 0;          // one duration in the bucket
    uint32_t n = 0;
  };
  std::vector<HistRun> hist_runs_;
};

}  // namespace argus::capture
