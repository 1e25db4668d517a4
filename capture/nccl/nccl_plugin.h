// Plugin: the NCCL side of the NCCL profiler source (docs/capture/nccl.md). NCCL calls the
// function tables (profilerV5(), profilerV4(); libargus_capture.so exports them as
// ncclProfiler_v5 / ncclProfiler_v4) from its user threads (Coll / P2p start and stop) and
// its proxy threads (ProxyOp, ProxyStep, KernelCh); every call lands here. A finished
// operation becomes one CollectiveRecord in the RecordQueue, which the collector's Drain
// (nccl_drain.h) turns into TraceEvents.
//
// Contract of every NCCL call: never blocks, never throws, never allocates (the event pool
// and the queue are allocated once, at the first init), returns ncclSuccess. A full pool or
// queue drops and counts. Only init can fail (an allocation failure): NCCL then runs on
// without the profiler.
//
// Sampling: operations and kernel channels are always on; the proxy events (ProxyOp,
// ProxyStep: several per channel per operation) are turned on in NCCL's activation mask for
// 1 in samplePeriod() operations. NCCL reads the mask when a group starts, so the bits set
// while one operation starts apply to the next group. The Drain adapts the period to the
// event rate (setSamplePeriod).
//
// One Plugin per process (instance()): NCCL's activation mask is process-wide, and the
// plugin outlives every communicator (never destroyed).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "capture/nccl/event_pool.h"
#include "capture/nccl/nccl_profiler_abi.h"
#include "capture/nccl/record_queue.h"

namespace argus::capture::nccl {

struct PluginOptions {
  uint32_t pool_events = 8192;    // live events at once (about 200 B each)
  uint32_t queue_records = 8192;  // finished operations awaiting the drain (power of two; 128 B each)
  uint32_t sample_period = 16;    // proxy events for 1 in N operations; 0: never, 1: all
};

// Counters since the process started (relaxed atomics; read by the Drain).
struct PluginCounters {
  uint64_t operations = 0;      // Coll / P2p events started
  uint64_t lost_operations = 0; // refused by a full pool or a full queue
  uint64_t lost_children = 0;   // ProxyOp / ProxyStep / KernelCh refused by a full pool
  uint64_t orphans = 0;         // children whose parent is not ours (null, foreign pid, unknown handle)
  uint64_t ignored = 0;         // event types Argus does not activate (NCCL sent them anyway)
  uint64_t contexts = 0;        // communicators initialized
  uint64_t late = 0;            // children that started after their operation was published
  uint64_t forced = 0;          // operations published by recycle() while still waiting for a child
  uint32_t in_use = 0;          // pool events live or awaiting recycling now
};

class Plugin {
 public:
  static constexpr int kAlwaysMask = abi::kColl | abi::kP2p | abi::kKernelCh;
  // v5 (NCCL 2.28) parents a Coll / P2p with its API event: those are activated too (one
  // shared handle, nothing recorded), so that NCCL never withholds an operation for want of
  // a parent.
  static constexpr int kApiMask = abi::kGroupApi | abi::kCollApi | abi::kP2pApi;
  static constexpr int kSampledMask = abi::kProxyOp | abi::kProxyStep;
  static constexpr uint32_t kMaxContexts = 1024;

  static Plugin& instance();

  // Sizes and the starting period; takes effect only before the first init (returns false after).
  bool configure(const PluginOptions& options);
  // Off: every event is refused (null handle) and the mask is cleared, so NCCL stops
  // calling; on again restores the mask. The shim turns the source off this way.
  void setEnabled(bool on);
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  // 0: no proxy events from the next group on; 1: all; N: 1 in N operations.
  void setSamplePeriod(uint32_t period);
  uint32_t samplePeriod() const { return period_.load(std::memory_order_relaxed); }

  // ---- NCCL's calls (any thread) ----
  // v5: NCCL 2.28's interface (the API events exist).
  abi::Result init(void** context, int* activation_mask, uint64_t comm_hash, int nranks, int rank, bool v5);
  template <typename Descr>
  abi::Result start(void* context, void** handle, const Descr* d);
  abi::Result stop(void* handle);
  abi::Result recordState(void* handle, int state, const abi::EventStateArgs* args);
  abi::Result finalize(void* context);

  // ---- the Drain's side (one thread) ----
  // Frees the events retired before the previous call, and publishes operations stopped
  // more than `stuck_ns` ago that still wait for a child (checked every stuck_ns / 4).
  void recycle(int64_t now_ns, int64_t stuck_ns);
  // nullptr until the first successful init.
  RecordQueue* queue() { return queue_ready_.load(std::memory_order_acquire) ? queue_.get() : nullptr; }
  PluginCounters counters() const;

 private:
  struct Context {
    std::atomic<bool> used{false};
    uint64_t comm_hash = 0;
    int nranks = 0;
    int rank = 0;
  };

  Plugin() = default;
  template <typename Descr>
  abi::Result startOperation(Context* ctx, void** handle, const Descr* d);
  template <typename Descr>
  abi::Result startChild(void** handle, const Descr* d, uint32_t type);
  // A parent handle from a descriptor, when it is a live event of ours of `kind`.
  Event* parentOf(void* parent, EventKind kind);
  // Takes a child's reference on `op`; false when it was published already.
  bool attach(Event* op);
  // Sets or clears the sampled bits for the groups NCCL starts next.
  void sample();
  void unref(Event* op);
  void publish(Event* op);
  void closeState(Event* step, int64_t now);
  int baseMask() const { return kAlwaysMask | (api_events_.load(std::memory_order_relaxed) ? kApiMask : 0); }

  PluginOptions options_;
  std::once_flag alloc_once_;
  std::unique_ptr<EventPool> pool_;
  std::unique_ptr<RecordQueue> queue_;
  std::atomic<bool> queue_ready_{false};
  std::atomic<bool> alloc_failed_{false};
  std::unique_ptr<Context[]> contexts_;
  std::atomic<int*> mask_{nullptr};  // the last init's activation mask; null once all are finalized
  std::atomic<uint32_t> live_inits_{0};  // inits not yet finalized
  std::atomic<bool> enabled_{true};
  std::atomic<bool> api_events_{false};  // a v5 init was seen
  std::atomic<uint32_t> period_{16};
  std::atomic<uint64_t> sample_counter_{0};
  Event group_event_;  // the one handle every Group and API event gets (nothing to record)
  struct alignas(64) Counters {
    std::atomic<uint64_t> operations{0}, lost_operations{0}, lost_children{0}, orphans{0}, ignored{0}, contexts{0}, late{0}, forced{0};
  } counters_;
  int64_t last_sweep_ns_ = 0;  // recycle()'s thread
};

// The function tables NCCL looks up (bound to Plugin::instance()). The shim's exported
// ncclProfiler_v5 / _v4 are copies of these with an init that starts the shim first.
const abi::ProfilerV5& profilerV5();
const abi::ProfilerV4& profilerV4();

}  // namespace argus::capture::nccl
