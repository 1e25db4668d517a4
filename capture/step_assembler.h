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

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "capture/append_buffer.h"
#include "capture/interval_math.h"
#include "capture/name_classifier.h"
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
  // max_buffered_events is clamped below 2^32: a step's per-bucket kernel counts are uint32.
  size_t max_buffered_events = 1 << 21;
  size_t max_markers_per_step = 64;
  int max_range_depth = 128;
  // Plausibility: an event lasting longer, or with a time outside [0, 2^62), is invalid;
  // a lone event more than max_clock_jump_ns ahead of the watermark is invalid unless the
  // next event confirms the jump.
  int64_t max_event_ns = 3'600'000'000'000;
  int64_t max_clock_jump_ns = 3'600'000'000'000;
  // Per-kernel totals: the exact sum of durations, or (default) the histogram's sketch
  // total, within 1% of it and coded in no bytes on the wire (docs/wire/step-record.md,
  // "Kernels"): exact totals cost ~1.3 bytes per kernel entry and step. Step and phase
  // totals are exact either way.
  bool exact_kernel_totals = false;
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
  // onEvent() for each event, in order: the same result, at less cost per event.
  void onEvents(std::span<const TraceEvent> events);
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

  // What a range or mark of a name does.
  // kKeepComm: kept, and a communication range (NameRules::isCommRange), whatever its class.
  enum class RangeUse : uint8_t { kIgnore, kKeep, kKeepComm, kStepMarker };
  // Per-name-id facts, each part computed on the name's first use as a kernel or as a
  // range / mark (NameClassifier), then a vector lookup.
  struct NameInfo {
    int64_t step_number = -1;  // step markers: -1 = counted
    bool kernel_known = false;
    bool range_known = false;
    RangeUse range_use = RangeUse::kIgnore;
    RangeClass range = RangeClass::kNone;
    KernelClass kernel;
  };
  static_assert(sizeof(NameInfo) == 16, "a power of two: the per-event lookup indexes by shift");
  // A direct-mapped cache of signature -> slot (slot_index_) for the per-kernel path: a
  // signature is a hash, so its low bits index well. Slot kNoSlot: empty.
  struct SlotCacheEntry {
    uint64_t signature = 0;
    uint32_t slot = kNoSlot;
  };
  static constexpr size_t kSlotCacheSize = 1024;
  enum class ActKind : uint8_t { kCompute, kComm, kCopy, kCollective };
  enum ActFlags : uint8_t {
    kConsumed = 1,      // folded into a step, or counted outside every step
    kKeyIsLaunch = 2,   // the step key is `launch`, else `start`
    kNewSignature = 4,  // the first activity of a signature new to the session
  };
  // A GPU activity or collective awaiting its step: one cache line.
  struct Act {
    int64_t start, end;
    int64_t launch;   // kNoTime when unknown or implausible
    uint64_t id;      // signature (kernels, copies) or communicator (collectives)
    uint64_t bytes;
    uint32_t slot;    // kernels, copies: dense session id of the signature (slotOf);
                      // collectives: their wait share (waitSlot)
    uint32_t thread;  // launching thread
    uint32_t peer;
    uint32_t device, stream;  // NCCL kernels and collectives: which collective covers which kernel
    ActKind kind;
    model::Phase name_phase;  // kernels: the phase of the kernel-name class
    model::CollectiveOp op;
    uint8_t flags;  // ActFlags
    int64_t key() const { return (flags & kKeyIsLaunch) ? launch : start; }
  };
  static_assert(sizeof(Act) == 64, "one buffered activity per cache line");
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
  // A thread's latest-ending phase range: whether it has phase ranges still buffered.
  struct PhaseThread {
    uint32_t thread;
    int64_t last_end;
  };

  NameInfo& kernelInfo(uint32_t name) {
    if (name < name_info_.size() && name_info_[name].kernel_known) return name_info_[name];
    return kernelInfoSlow(name);
  }
  NameInfo& rangeInfo(uint32_t name) {
    if (name < name_info_.size() && name_info_[name].range_known) return name_info_[name];
    return rangeInfoSlow(name);
  }
  NameInfo& kernelInfoSlow(uint32_t name);
  NameInfo& rangeInfoSlow(uint32_t name);
  NameInfo& entry(uint32_t name);
  // Most events are in order and in range: checked inline; the rest in plausibleSlow.
  bool plausible(const TraceEvent& e) {
    constexpr uint32_t kSpans = 1u << static_cast<int>(EventType::kKernel) | 1u << static_cast<int>(EventType::kMemcpy) |
                                1u << static_cast<int>(EventType::kMemset) | 1u << static_cast<int>(EventType::kRange) |
                                1u << static_cast<int>(EventType::kCollective);
    if (static_cast<uint64_t>(e.start_ns) >= fast_starts_) return plausibleSlow(e);
    // The start is below fast_cap_ <= 2^62 - max_event_ns, so a duration within
    // max_event_ns also keeps the end below 2^62.
    return !((kSpans >> static_cast<int>(e.type)) & 1u) ||
           static_cast<uint64_t>(e.end_ns) - static_cast<uint64_t>(e.start_ns) <= static_cast<uint64_t>(options_.max_event_ns);
  }
  // Decides every event the fast check does not pass, and sets that check's bound.
  bool plausibleSlow(const TraceEvent& e);
  void drop(uint64_t* counter);
  // onEvent() but for stats_.events. kBatch (onEvents): the kernel path inlined into the
  // loop, whose prologue runs once per batch; onEvent keeps it out of line, so that the
  // events that need no buffering pay no large function's prologue.
  template <bool kBatch>
  void take(const TraceEvent& e);
  void bufferKernel(const TraceEvent& e);  // always inline
  void onKernel(const TraceEvent& e);      // bufferKernel, out of line
  // A complete range (Chrome "X") whose name is of use: a step marker or a kept range.
  void onCompleteRange(const NameInfo& ni, const TraceEvent& e);
  // What admit() resolved for GPU work or a collective: its launch (kNoTime when unknown or
  // implausible), launching thread, and whether its step key is the launch.
  struct Admitted {
    int64_t launch;
    uint32_t thread;
    uint8_t flags;
  };
  // Returns false (counted) when the work is late or the buffer is full.
  bool admit(const TraceEvent& e, Admitted* out);
  Act& pushAct(const TraceEvent& e, const Admitted& g, uint64_t id, uint32_t slot, ActKind kind, model::Phase name_phase,
               model::CollectiveOp op, uint8_t flags);
  void appended(const Act& a);
  // The slot of a kernel's signature; on its first sight in the session, a dictionary
  // entry and kNewSignature in *flags.
  uint32_t kernelSlot(uint64_t signature, const TraceEvent& e, uint8_t* flags) {
    SlotCacheEntry& c = slot_cache_[signature & (kSlotCacheSize - 1)];
    if (c.signature == signature && c.slot != kNoSlot) return c.slot;
    return kernelSlotSlow(&c, signature, e, flags);
  }
  uint32_t kernelSlotSlow(SlotCacheEntry* c, uint64_t signature, const TraceEvent& e, uint8_t* flags);
  void onCopy(const TraceEvent& e);
  void onCollective(const TraceEvent& e);
  void onRangeBegin(const TraceEvent& e);
  void onRangeEnd(const TraceEvent& e);
  void onRange(RangeClass cls, bool comm, int64_t begin, int64_t end, uint32_t thread);
  void onStepMarker(const NameInfo& ni, int64_t begin, int64_t end, uint32_t thread);
  void onMark(const TraceEvent& e);
  void onSample(const TraceEvent& e);
  void openStep(uint64_t step, int64_t begin, int64_t end, uint32_t thread, uint32_t flags);
  void inferFrom(const Act& a, const KernelClass& kc);
  void updateEmitAt();
  void emitDue();
  void emit(const PendingStep& s);
  void foldMembers(const PendingStep& s);
  void scanActs(const PendingStep& s);
  void resolveNcclKernels();
  void buildTimelines(int64_t lo, int64_t hi, const PendingStep& s);
  // A step without device activity: fills the phase columns from the CPU phase and
  // communication ranges in its window. Returns false (record untouched) when it has none.
  bool foldCpuPhases(const PendingStep& s);
  // The fold's stamp and count of live statistics, kept in scanActs' registers (as members,
  // every store through a uint32_t would reload them).
  struct LiveStats {
    uint32_t stamp;
    uint32_t count;
  };
  void foldMember(const Act& a, const PendingStep& s, LiveStats& live);
  void foldKernelStat(uint32_t cell_id, int64_t dur, LiveStats& live);
  // wait_ns: the call's time waiting for a late peer, -1 unknown (finishCollectiveWaits
  // scales an entry's known waits to its calls whose wait is unknown).
  void addCollective(model::CollectiveOp op, uint64_t comm, uint64_t bytes, uint32_t peer, int64_t dur, int64_t wait_ns = -1);
  void finishCollectiveWaits();
  // A collective Act keeps TraceEvent::wait_ns in its `slot`, as a share of its duration in
  // units of 1 / kWaitScale (kNoSlot: unknown): 32 bits, exact to a ns at any duration up to
  // 4 s and to 1 ppb beyond.
  static constexpr uint32_t kWaitScale = UINT32_MAX - 1;
  static uint32_t waitSlot(const TraceEvent& e) {
    int64_t dur = e.end_ns - e.start_ns;
    if (e.wait_ns < 0 || dur <= 0) return kNoSlot;
    double share = static_cast<double>(e.wait_ns < dur ? e.wait_ns : dur) / static_cast<double>(dur);
    return static_cast<uint32_t>(share * kWaitScale + 0.5);
  }
  // Whether a collective event on the NCCL kernel's device and stream overlaps it. REQUIRES:
  // calls in start order (a cursor into collective_spans_).
  bool coveredByCollective(const Act& k);
  void finishKernelStats();
  // Lists the cells new to cell_order_ (new_cells_) in order, and fills stat_order_.
  void orderKernelStats();
  // Counts a duration outside accumulator `index`'s window.
  void spillBucket(uint32_t index, int32_t bucket);
  // Drops work and ranges no later step can need (they ended by `end`): every dead
  // activity; the ranges' dead prefix, or with `full` (or once they have doubled) every dead range.
  void pruneAfter(int64_t end, bool full = false);
  void pruneActs(int64_t end);
  void pruneRanges(int64_t end, bool full);
  void pruneDead();
  void pruneOrphans();
  ThreadStack& stackOf(uint32_t thread);
  uint64_t copySignature(CopyKind kind, bool memset);
  // The dense slot of a signature; *inserted when the session sees it for the first time.
  uint32_t slotOf(uint64_t signature, bool* inserted);

  static constexpr uint64_t kMaxTimeNs = uint64_t{1} << 62;

  const NameTable& names_;
  const StepAssemblerOptions options_;
  const NameClassifier classifier_;
  Callback on_step_;
  AssemblerStats stats_;

  std::vector<NameInfo> name_info_;
  // Buffered work, without what is dead (consumed and ended by the last emitted step) since
  // the last emit. Every consumed activity lies in acts_[0, consumed_end_): the scans consume
  // from the front (a sort may scatter them: then the bound is the whole buffer), so pruning
  // visits that region only. Ranges die in any order: see pruneRanges.
  AppendBuffer<Act> acts_;
  size_t consumed_end_ = 0;
  bool acts_sorted_ = true;           // by start
  int64_t last_act_start_ = INT64_MIN;
  int64_t max_lead_ = 0;              // largest start - key of any buffered act (scan bound)
  // Launches of buffered acts keyed by their start (inferred steps): how far before (lead)
  // and after (lag) their start, so that a fold knows which ranges can enclose them.
  int64_t start_keyed_lead_ = 0, start_keyed_lag_ = 0;
  size_t next_orphan_check_ = 0;
  bool dead_ranges_ = false;  // an emit may have left dead ranges behind a live one
  AppendBuffer<CpuRange> ranges_;
  size_t ranges_live_after_prune_ = 0;  // live ranges after the last full pruning pass
  bool ranges_sorted_ = true;  // by begin
  std::vector<PhaseThread> phase_threads_;
  std::vector<Instant> instants_;
  std::vector<PendingStep> pending_;
  std::vector<ThreadStack> stacks_;
  std::vector<Launch> launches_;  // direct-mapped by correlation id

  int64_t watermark_ = INT64_MIN;
  int64_t emit_at_ = INT64_MAX;        // the watermark at which the first pending step is due
  int64_t emitted_until_ = INT64_MIN;  // end of the last emitted step
  int64_t jump_candidate_ = INT64_MIN;
  // plausible()'s fast path takes starts below fast_starts_: at most max_clock_jump_ns past
  // the watermark when plausibleSlow last ran (the watermark only grows, so the bound stays
  // safe without an update per event) and below fast_cap_ (2^62 - max_event_ns). It takes
  // none before the first event, while a jump awaits confirmation, or when the options are
  // not sane: then plausibleSlow decides every event, the same way.
  uint64_t fast_starts_ = 0;
  uint64_t fast_jump_ = 0, fast_cap_ = 0;
  int64_t device_end_ = INT64_MIN;     // latest GPU end seen while inferring (idle gap)
  bool markers_seen_ = false;
  bool keys_by_start_ = false;         // infer_steps and no marker yet: step keys are GPU starts
  bool collective_events_seen_ = false;
  uint64_t next_step_ = 0;
  uint64_t dropped_since_emit_ = 0;
  bool partial_since_emit_ = false;
  StepPeriodDetector detector_;

  // Session dictionaries.
  std::vector<bool> string_sent_;
  std::vector<model::KernelDictEntry> new_kernels_;
  std::vector<model::StringDictEntry> new_strings_;
  uint64_t copy_signatures_[2][6] = {};
  uint32_t copy_slots_[2][6];
  // Signature -> slot: dense ids so that the per-step fold finds a kernel's statistics by
  // direct indexing (stat_cells_[slot * kPhaseSlots + phase]) instead of hashing. A
  // signature is new to the session (a dictionary entry) when it gets its slot.
  model::FlatIndex slot_index_;
  std::array<SlotCacheEntry, kSlotCacheSize> slot_cache_{};

  // Per-emit scratch, reused.
  model::StepRecord record_;
  std::vector<Interval> busy_, compute_all_, comm_, scratch_, merged_, mb_gaps_, data_;
  std::vector<int64_t> busy_launch_;  // launch of the activity that opens busy_[i]
  PhaseTimelines timelines_;
  std::vector<uint32_t> timeline_threads_;
  model::FlatIndex collective_index_, stack_index_;
  std::vector<int64_t> wait_known_ns_;  // by record_.collectives entry: duration of its calls with a known wait
  // Collectives seen by the scan, in start order: which member NCCL kernels (uncovered_,
  // acts_ indices, decided after the scan) a collective event covers.
  struct CollectiveSpan {
    int64_t start, end;
    uint32_t device, stream;
  };
  std::vector<CollectiveSpan> collective_spans_;
  std::vector<uint32_t> uncovered_;
  size_t collective_cursor_ = 0;
  int64_t longest_collective_ = 0;
  static constexpr uint32_t kListedFolds = 4;  // see cell_order_
  // Kernel statistics of a fold, one per (signature slot, phase) cell in use: a cell is live
  // when its stamp is fold_stamp_, its accumulator then stat_accs_[index].
  struct StatCell {
    uint32_t stamp = 0;
    uint32_t index = 0;
  };
  std::vector<StatCell> stat_cells_;
  // Starts past kListedFolds: a cell never used (stamp 0) is never taken for a listed one.
  uint32_t fold_stamp_ = kListedFolds;
  uint32_t kernel_stats_ = 0;  // live accumulators in this fold
  // A statistic's accumulator. finishKernelStats leaves it empty for the next fold. Its
  // histogram counts the kStatWindow buckets from `base` (set by the first duration's
  // bucket, centred) in place, in index order (`mask`: which are set), so the buckets need
  // no sort; a duration outside the window (beyond a factor of 1.9 from the first: copies,
  // collectives, kernels sized by their input) goes to a chain of spills. 64 buckets: a
  // third of a100-8rank's kernels fell outside 16. Its signature and phase are its cell's.
  static constexpr int32_t kStatWindow = 64;
  struct StatAcc {
    int64_t total_ns = 0;
    int32_t base = 0;
    uint32_t spill_head = 0;  // first spill + 1 (0: none)
    uint64_t mask = 0;
    uint32_t counts[kStatWindow] = {};
  };
  struct Spill {
    int32_t bucket;
    uint32_t n;
    uint32_t next;  // the statistic's next spill + 1 (0: none)
  };
  std::vector<StatAcc> stat_accs_;
  std::vector<Spill> spills_;
  model::FlatIndex spill_index_;  // (accumulator, bucket) -> spills_ position
  // The record lists statistics in canonical order (StepRecord::canonicalize: signature,
  // then phase). Cells used in the last kListedFolds folds are listed in that order, so a
  // fold walks the list instead of sorting its statistics; only cells new to the list are
  // sorted, and merged in.
  std::vector<uint32_t> cell_order_, new_cells_, merged_cells_;
  std::vector<uint64_t> slot_signatures_;  // by slot
  std::vector<uint32_t> stat_order_;       // live cells, in the record's order
  std::vector<model::KernelStat> spare_kernels_;  // record_.kernels past the last step's count
  static constexpr int kBucketMemoBits = 10;
  struct BucketMemo {
    int64_t dur = INT64_MIN;  // never a duration (those are >= 0)
    int32_t bucket = 0;
  };
  std::array<BucketMemo, size_t{1} << kBucketMemoBits> bucket_memo_{};
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
  RunningUnion forward_, backward_, optimizer_, compute_;
  // foldCpuPhases scratch: the window's phase and communication ranges, clipped; intervals
  // per column (kCpuForward.. kCpuComm) and of one thread; two merged unions.
  enum CpuSet : size_t { kCpuForward, kCpuBackward, kCpuOptimizer, kCpuCompute, kCpuComm, kCpuSets };
  std::vector<CpuRange> cpu_ranges_;
  std::array<std::vector<Interval>, kCpuSets> cpu_sets_;
  std::vector<Interval> thread_phase_, thread_comm_, cpu_union_[2];
};

}  // namespace argus::capture
