// Collector: the capture shim's runtime, one per process (docs/capture/shim.md). It owns
// the sources' consumer side, a StepAssembler for this rank and a StepSender, and runs one
// thread that every collect_interval_ms drains the NVTX source, the NCCL profiler plugin's
// (and CUPTI when it runs) into the assembler and hands each emitted step to the sender.
//
// Threads: the collector thread does all draining, assembling and send() calls; the
// control thread (whoever ran the injection entry point, or exit) calls startGpu() and
// shutdown(). Training threads never touch the Collector: they only write the sources'
// rings, which never block.
//
// Failure: any error the shim cannot retry (a permanent Close from argusd, an exception,
// an allocation failure) is logged once and makes the shim quiet: recording off, the
// collector thread idle, the job untouched. argusd being absent or restarting is not an
// error: the sender reconnects; records beyond its buffer go to its spool file (this
// thread writes it), and records beyond the spool's bound are dropped and counted.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "capture/flight_recorder.h"
#include "capture/name_table.h"
#include "capture/nccl/nccl_drain.h"
#include "capture/nvtx/nvtx_drain.h"
#include "capture/shim/shim_config.h"
#include "capture/stacks/stack_sampler.h"
#include "capture/step_assembler.h"
#include "wire/step_sender.h"

#ifdef ARGUS_SHIM_CUPTI
#include "capture/cupti/cupti_source.h"
#endif

namespace argus::capture::shim {

// Counters since start (read by tests and the exit line).
struct CollectorStats {
  uint64_t collections = 0;         // drain rounds
  uint64_t events = 0;              // events fed to the assembler
  uint64_t steps = 0;               // steps handed to the sender
  uint64_t records_dropped = 0;     // refused by the sender (buffer and spool full, or no spool)
  uint64_t source_drops = 0;        // NVTX + CUPTI events lost at their rings, NCCL operations lost
  uint64_t dumps_written = 0;       // flight-recorder dumps written on argusd's request
  uint64_t dumps_failed = 0;        // requests that wrote no file (nothing kept, I/O error)
};

class Collector {
 public:
  // Builds the sources' consumers, the assembler and the sender (which connects in the
  // background), and starts the collector thread. Never throws (a failure leaves it quiet).
  explicit Collector(const ShimConfig& config);
  ~Collector();
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  // Starts GPU tracing (CUDA's injection entry point: CUDA is initializing). Without the
  // CUPTI source in this build, a no-op. Failure: one line, the job runs on untraced.
  void startGpu();
  // Stops the thread, drains the sources a last time, flushes the assembler (open steps
  // end as partial) and waits up to config.exit_flush_ms for argusd's acks. Idempotent.
  void shutdown();
  // In a fork child: the parent's threads are gone and its locks may be held, so touch
  // nothing but atomics: recording off, shutdown() does nothing.
  void abandonAfterFork();

  bool quiet() const { return quiet_.load(std::memory_order_acquire); }
  CollectorStats stats() const;
  wire::StepSenderStats senderStats() const { return sender_.stats(); }

 private:
  void run();
  // Drains every source into the assembler. Collector thread (or shutdown after join, with
  // `final`: the GPU events still waiting for their launch records go too).
  void collectOnce(bool final = false);
  void onStep(const StepOutput& out);
  // Logs `why` (once) and turns the shim off; the job runs on.
  void goQuiet(const std::string& why);
  uint64_t sourceDropsNow();
  // ARGUS_VERBOSE: every source's counters, one line each. At exit.
  void logCounters();
  // Collector thread: writes the flight-recorder dumps argusd asked for, if any are pending.
  void dumpIfRequested();
  void dumpSteps(uint64_t from, uint64_t to);
  // Feeds one event to the assembler and the flight recorder. Collector thread.
  void onEvent(const TraceEvent& e) {
    if (recorder_) recorder_->record(e);
    assembler_.onEvent(e);
  }

  // Dump requests, pushed by the sender's I/O thread and popped by the collector thread: a
  // single-producer single-consumer ring, so neither side ever waits. Full: dropped, counted.
  struct DumpRequests {
    static constexpr size_t kSlots = 8;
    struct Range {
      uint64_t from = 0, to = 0;
    };
    std::array<Range, kSlots> slots;
    std::atomic<uint64_t> head{0};  // next slot to fill (producer)
    std::atomic<uint64_t> tail{0};  // next slot to read (consumer)
    std::atomic<uint64_t> dropped{0};
    void push(uint64_t from, uint64_t to);
    bool pop(Range* out);
  };

  const ShimConfig config_;
  const pid_t owner_pid_;
  NameTable names_;
  nvtx::Drain nvtx_;
  nccl::Drain nccl_;
#ifdef ARGUS_SHIM_CUPTI
  struct Sink : cupti::EventSink {
    StepAssembler* assembler = nullptr;
    FlightRecorder* recorder = nullptr;
    uint64_t events = 0;
    void onEvents(std::span<const TraceEvent> events) override;
  };
  std::unique_ptr<cupti::CuptiSource> gpu_;
  Sink sink_;
#endif
  std::unique_ptr<FlightRecorder> recorder_;  // null when ARGUS_FLIGHT_RECORDER_MB=0
  DumpRequests dump_requests_;
  uint64_t dumps_dropped_logged_ = 0;  // collector thread
  wire::StepSender sender_;
  StepAssembler assembler_;
  std::unique_ptr<stacks::StackSampler> stacks_;  // CPU stack sampler; null when ARGUS_STACK_HZ=0

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  CollectorStats stats_;  // GUARDED_BY(mu_) for readers; written by the collector thread
  uint64_t drops_reported_ = 0;  // collector thread: source + sender drops already in records
  std::atomic<bool> quiet_{false};
  std::atomic<bool> shut_down_{false};
  std::atomic<bool> send_full_logged_{false};
  std::thread thread_;
};

}  // namespace argus::capture::shim
