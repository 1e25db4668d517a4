// CuptiSource: GPU kernels, copies and memsets from the CUPTI Activity API, as
// capture::TraceEvents for the shim's collector (docs/capture/cupti.md).
//
// Threads:
//   control thread   load(), start(), stop() (the shim's init and exit).
//   training threads onRangeChange() from the NVTX source: lock-free, never blocks; and,
//                    inside CUDA calls, CUPTI's buffer requests (ActivityBuffers).
//   our flush thread every flush_interval_ms: cuptiActivityFlushAll (CUPTI hands back the
//                    buffers whose records are complete), dropped-record count, clock
//                    re-calibration, switching off after persistent failure.
//   draining thread  drain(): the collector's thread, which owns the NameTable and the
//                    StepAssembler; decodes the handed-back buffers and recycles them.
//
// Coexistence with torch.profiler: no cuptiSubscribe (CUDA <= 13.2 has one subscriber slot
// and Kineto takes it once, never retrying), no timestamp callback, no thread-id type, no
// cuptiFinalize; our external correlation kind is CUSTOM2 (Kineto owns CUSTOM0/1). What a
// torch.profiler session still does to us is in docs/capture/cupti.md. Kineto's timestamp
// callback (a TSC reader) stamps every record from its first session on in CPU ticks: each
// buffer carries the clock epoch of its completion (ActivityBuffers), and is decoded with
// the clock of that epoch, CUPTI's own or the guest's (ClockSync::calibrateTicks).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "base/status.h"
#include "capture/cupti/activity_buffers.h"
#include "capture/cupti/activity_decoder.h"
#include "capture/cupti/activity_handover.h"
#include "capture/cupti/clock_sync.h"
#include "capture/cupti/cupti_api.h"
#include "capture/cupti/launch_contexts.h"
#include "capture/name_table.h"
#include "capture/trace_event.h"

namespace argus::capture::cupti {

// Receives decoded events on the draining thread.
class EventSink {
 public:
  virtual ~EventSink() = default;
  // One handed-back buffer's GPU events, in buffer order (roughly completion order; CUPTI
  // does not sort). The span is valid during the call only.
  virtual void onEvents(std::span<const TraceEvent> events) = 0;
};

struct CuptiSourceOptions {
  LoadOptions library;
  BufferOptions buffers;
  DecoderOptions decoder;
  uint32_t launch_contexts = 1u << 16;  // NVTX range changes remembered (LaunchContexts)
  int flush_interval_ms = 250;
  int calibrate_interval_ms = 10'000;
  // The Unix-ns clock the shim's CPU-side sources stamp events with (the NVTX source's
  // EpochClock::nowNs): GPU times are mapped onto it. Null: CLOCK_REALTIME.
  int64_t (*epoch_clock)() = nullptr;
  bool memcpy = true;
  bool memset = true;
  // Attribute kernels to the NVTX range that launched them: external correlation records
  // (kind CUSTOM2, pushed by onRangeChange) plus API records of the launch, copy and memset
  // calls only (CUPTI writes external correlation records only before API records; those
  // also give each launch its exact CPU time).
  bool launch_attribution = true;
  // cuptiActivityFlushAll failing this many times in a row switches the source off.
  int max_flush_failures = 20;
  // One line per thing a person should know (tracing off, switched off); default stderr.
  void (*log)(const char* line) = nullptr;
};

struct CuptiSourceStats {
  BufferStats buffers;
  DecodeStats decode;
  uint64_t flushes = 0;
  uint64_t flush_failures = 0;
  uint64_t cupti_dropped = 0;   // records CUPTI dropped (cuptiActivityGetNumDroppedRecords)
  uint64_t range_changes = 0;   // onRangeChange calls that tagged
  uint64_t tag_failures = 0;    // push / pop of our external correlation id failed
  uint32_t launch_apis = 0;     // driver + runtime APIs whose records are enabled
  uint64_t guest_pauses = 0;    // times another CUPTI client (torch.profiler) took the API
  bool paused = false;          // ... and has it now
  int64_t clock_offset_ns = 0;  // unix = cupti + offset (CUPTI's own clock)
  int64_t clock_uncertainty_ns = 0;
  bool guest_clock = false;     // records are stamped with a guest's timestamp callback
  double guest_ns_per_tick = 0;  // ... whose fitted rate this is
  uint32_t clock_epochs = 0;    // clock changes seen (ActivityBuffers::clockEpoch)
  bool running = false;
};

// The owner of CUPTI's Activity API for the shim. It lends the API to torch.profiler while a
// profiler session runs (ActivityHandover, when the shim is preloaded) and resumes after it.
class CuptiSource : public ActivityHandover::Owner {
 public:
  // `names` is the collector's table (drain() interns into it); it must outlive the source.
  explicit CuptiSource(NameTable& names, CuptiSourceOptions options = {});
  // stop(). Keep the source alive as long as CUPTI may call back (the shim: process life).
  ~CuptiSource();
  CuptiSource(const CuptiSource&) = delete;
  CuptiSource& operator=(const CuptiSource&) = delete;

  // Loads libcupti and binds the buffer callbacks to this source. Touches no CUPTI state.
  // Idempotent. Fails without a usable libcupti, or when another CuptiSource is bound.
  Status load();
  // load(); calibrates the clock; registers the buffer callbacks; enables CONCURRENT_KERNEL,
  // MEMCPY, MEMSET, EXTERNAL_CORRELATION and the launch API records; starts the flush
  // thread. On any failure undoes what it enabled, logs one line ("GPU tracing off: ...")
  // and returns the Status: the training job runs on untraced. Restartable after stop().
  Status start();
  // Turns tagging off, stops the flush thread, disables our record kinds and force-flushes:
  // every remaining record is queued for drain(). Idempotent.
  void stop();
  bool running() const { return running_.load(std::memory_order_acquire); }

  // The NVTX ranges of `thread` changed at `ts_ns` (Unix ns): a push, a pop, a range start
  // or end, or a mark (step markers) that the NVTX source recorded on this thread. `thread` is the id the
  // NVTX source puts in its TraceEvents. Kernels this thread launches from now until its
  // next change carry that thread and (without an API record) ts_ns as launch_ns.
  // Any thread, lock-free. While tagging is off (not running, paused) it only pops the id
  // this thread still has on CUPTI's stack, once.
  void onRangeChange(uint32_t thread, int64_t ts_ns);
  // onRangeChange for a C-style listener whose context is the CuptiSource (the NVTX
  // source's RangeListener: {&CuptiSource::rangeListener, &source}).
  static void rangeListener(void* source, uint32_t thread, int64_t ts_ns) {
    static_cast<CuptiSource*>(source)->onRangeChange(thread, ts_ns);
  }
  // Pauses (false) or resumes launch tagging without stopping the source. The shim pauses
  // it while torch.profiler records: Kineto logs a warning for every external correlation
  // record of a kind not its own. Each thread drops its id at its next range change.
  void setLaunchAttribution(bool on);

  // Decodes every buffer CUPTI has handed back and gives each buffer's events to `sink`.
  // With launch attribution, an event whose launch record has not been decoded yet waits
  // (ActivityDecoder::rejoin): until that record comes, or one later batch of buffers has
  // been decoded without it, or kLaunchWaitNs; then it goes to `sink` joined or not.
  // `final` (at exit, after stop()'s forced flush) gives every waiting event. Returns the
  // number of events given. Only on the thread that owns `names`; never blocks on CUPTI or
  // on training threads.
  size_t drain(EventSink& sink, bool final = false);
  static constexpr int64_t kLaunchWaitNs = 1'000'000'000;  // well under the assembler's emit lag

  // On the draining thread (the decode counters are that thread's).
  CuptiSourceStats stats() const;
  // The libcupti in use (path or soname), empty before load(); the launch APIs whose records
  // are selected; whether torch.profiler has the API now. Any thread, after start().
  const std::string& library() const { return api_.library; }
  uint32_t launchApis() const { return launch_apis_; }
  bool lent() const { return paused_.load(std::memory_order_acquire); }
  const CuptiApi& api() const { return api_; }

  // ActivityHandover::Owner, on the guest's thread under the handover's lock (tests call
  // them through the handover too).
  void pauseForGuest() override;
  void resumeAfterGuest() override;
  bool usesKind(CUpti_ActivityKind kind) const override;
  // torch.profiler's records reach us too: copied into our pool (ActivityBuffers::adopt).
  void observeGuestBuffer(uint8_t* buffer, size_t valid) override;
  // A forced flush: our buffers with records on the old clock come back first.
  void beforeClockChange() override;
  // A new clock epoch, then its clock calibrated at once (a 2 ms wait).
  void clockChanged(CUpti_TimestampCallbackFunc ticks) override;

 private:
  // `register_callbacks` false: a guest traces now, our callbacks wait for resumeAfterGuest().
  Status enableAll(bool register_callbacks);
  void disableAll();
  // Enables (or disables) API records for the launch, copy and memset calls of the driver
  // and runtime APIs, chosen by name. Returns the number of APIs.
  uint32_t selectLaunchApis(bool enable);
  void flushLoop();
  void flushOnce();
  void switchOff(const std::string& why);
  void log(const std::string& line) const;
  ClockSync::EpochFn epoch() const;
  // The clock of the buffers completed in `epoch`.
  ClockMap clockFor(uint32_t epoch);
  // Refines the current guest clock's rate (the flush thread, at every flush).
  void calibrateGuestClock();

  NameTable& names_;
  const CuptiSourceOptions options_;
  CuptiApi api_;
  ActivityBuffers buffers_;
  LaunchContexts contexts_;
  ClockSync clock_;  // CUPTI's own
  // A clock from its first epoch on: CUPTI's own (no guest) or a guest's. eras_ holds the
  // latest kKeptEras by first epoch, the current last: buffers of any of them waiting for a
  // drain decode on their own clock, however many changes came between two drains; older
  // ones (kKeptEras changes in one drain period) on the oldest kept.
  struct ClockEra {
    uint32_t first_epoch = 0;
    CUpti_TimestampCallbackFunc ticks = nullptr;
    std::shared_ptr<ClockSync> guest;  // its map (null: CUPTI's own clock)
  };
  static constexpr size_t kKeptEras = 8;
  mutable std::mutex clock_mu_;  // the eras: the guest's thread, the flush thread, the drain
  std::vector<ClockEra> eras_{ClockEra{}};
  ActivityDecoder decoder_;
  std::vector<TraceEvent> scratch_;  // one buffer's events, reused
  // Events waiting for their launch record (drain()), in decode order, and those released
  // by one drain; `batch_` counts the drains that decoded buffers.
  struct Waiting {
    TraceEvent event;
    uint64_t batch;    // batch_ when decoded
    int64_t since_ns;  // steady clock
  };
  static constexpr size_t kMaxWaiting = 1 << 16;  // beyond: given on unjoined at once
  void holdUnjoined(int64_t now_ns);
  size_t releaseWaiting(EventSink& sink, bool all, int64_t now_ns);
  std::vector<Waiting> waiting_;
  std::vector<TraceEvent> ready_;
  uint64_t batch_ = 0;
  std::vector<CUpti_ActivityKind> enabled_kinds_;
  bool whole_runtime_kind_ = false;  // fallback when per-API selection is unavailable
  uint32_t launch_apis_ = 0;

  std::atomic<bool> running_{false};
  std::atomic<bool> tagging_{false};
  std::atomic<bool> paused_{false};  // the API is lent to a guest (ActivityHandover)
  std::atomic<uint64_t> guest_pauses_{0};
  std::atomic<uint64_t> range_changes_{0}, tag_failures_{0}, flushes_{0}, flush_failures_{0}, cupti_dropped_{0};
  std::atomic<int> last_tag_error_{0};
  bool tag_failure_logged_ = false;     // flush thread only
  int consecutive_flush_failures_ = 0;  // flush thread only

  std::mutex mu_;  // the control thread and the flush thread only
  std::condition_variable wake_;
  bool stop_requested_ = false;
  std::thread flusher_;
};

}  // namespace argus::capture::cupti
