// Recorder: the training-thread side of the NVTX source (docs/capture/nvtx.md). Each NVTX
// call the injection handlers receive (nvtx_injection.h) lands here and becomes one Record in
// the calling thread's ring; the collector's Drain (nvtx_drain.h) turns records into
// TraceEvents later.
//
// Contract of every recording call: never blocks (no lock, no waiting on the drain), never
// throws, never allocates except on a thread's first call (its ThreadState), costs a clock
// read plus a hash-and-compare of the name. A full ring drops the event and counts it; the
// pop of a recorded push is never dropped (its slot is reserved at the push). Not
// async-signal-safe: a signal handler's NVTX call must not interrupt one of its thread.
//
// One Recorder per process (instance()): NVTX injection is process-wide, and so are the
// handles it issues (domains, registered strings, range ids). Never destroyed, so that NVTX
// calls from threads still running during exit stay safe.
#pragma once

#include <atomic>
#include <cstdint>

#include "capture/nvtx/nvtx_record.h"
#include "capture/nvtx/nvtx_registry.h"
#include "capture/nvtx/thread_state.h"

namespace argus::capture::nvtx {

// The name of an NVTX event as the application gave it.
struct Message {
  enum class Kind : uint8_t { kNone, kAscii, kWide, kRegistered };
  Kind kind = Kind::kNone;
  const char* ascii = nullptr;
  const wchar_t* wide = nullptr;
  uint32_t registered = 0;  // Registry string id

  static Message none() { return {}; }
  static Message ofAscii(const char* s) { return {Kind::kAscii, s, nullptr, 0}; }
  static Message ofWide(const wchar_t* s) { return {Kind::kWide, nullptr, s, 0}; }
  static Message ofRegistered(uint32_t id) { return {Kind::kRegistered, nullptr, nullptr, id}; }
};

// Told about every range change of a thread as it happens, on that thread: the CUPTI source
// uses it to tag the kernels a thread launches with the range they were launched in
// (CuptiSource::onRangeChange). Must be lock-free and cheap; `context` is passed back.
struct RangeListener {
  void (*onRangeChange)(void* context, uint32_t thread, int64_t ts_ns) = nullptr;
  void* context = nullptr;
};

class Recorder {
 public:
  static constexpr uint32_t kDefaultRingSlots = 16384;  // 512 KiB per recording thread
  // Range ids: (state index + 1) << 40 | a per-state counter; this bit marks a start that was
  // not recorded, so that its end is skipped without a record.
  static constexpr uint64_t kUnrecordedRange = uint64_t{1} << 39;

  static Recorder& instance();

  Registry& registry() { return registry_; }
  const Registry& registry() const { return registry_; }

  // Ring size (rounded up to a power of two, at least 64) of threads that make their first
  // NVTX call after this; threads already recording keep theirs.
  void setRingSlots(uint32_t slots);
  // Off: calls record nothing (pops of pushes recorded while on still close them). The
  // shim turns capture off this way after a persistent failure.
  void setEnabled(bool on) { enabled_.store(on, std::memory_order_relaxed); }
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }

  // Installs `listener` (nullptr: none). It is called after every push, pop, start, end (of
  // a recorded start) and mark of any thread, with that thread's id and the event's time,
  // whether the ring had room for the event or not.
  // REQUIRES: *listener outlives every NVTX call of the process (static storage).
  void setRangeListener(const RangeListener* listener) { listener_.store(listener, std::memory_order_release); }

  // ---- recording calls: the calling thread, hot path ----
  // NVTX's return values: push returns the level (0-based) of the new range in `domain`,
  // pop the level of the range it ends, or -1 when none is open (or the domain is bad).
  int push(uint32_t domain, const Message& m, Payload p) noexcept;
  int pop(uint32_t domain) noexcept;
  // Returns the range id for end() (any thread), never 0.
  uint64_t start(uint32_t domain, const Message& m, Payload p) noexcept;
  void end(uint64_t id) noexcept;
  void mark(uint32_t domain, const Message& m, Payload p) noexcept;
  void nameOsThread(uint32_t os_tid, const Message& m) noexcept;

  // ---- the drain's side ----
  // The first ThreadState of the list (newest first); next pointers are constant.
  ThreadState* threads() const { return threads_.load(std::memory_order_acquire); }
  // A new consumer: every thread forgets its name cache before its next call (the new
  // drain has no slot map yet). Returns the new generation.
  uint32_t newGeneration() { return generation_.fetch_add(1, std::memory_order_acq_rel) + 1; }

 private:
  Recorder() = default;
  // The calling thread's state; nullptr when it cannot have one (exiting, out of memory).
  // Defined next to the thread-local pointer it reads (nvtx_recorder.cpp).
  ThreadState* state();
  ThreadState* attach();
  // A resolved name: a cache hit (ref), or a definition to write first (define).
  struct Named {
    uint32_t ref = 0;
    bool define = false;
    const char* text = nullptr;
    uint32_t bytes = 0;
    uint64_t hash = 0;
  };
  static void resolve(ThreadState& t, uint32_t domain, const Message& m, Named* out);
  // Writes the definition (if any) and `r` (named by n) with `keep` more slots free after
  // them; returns false (counted) when they do not fit.
  bool write(ThreadState& t, const Named& n, uint32_t keep, Record r);
  void notify(const ThreadState& t, int64_t ts_ns) {
    const RangeListener* l = listener_.load(std::memory_order_acquire);
    if (__builtin_expect(l != nullptr, 0)) l->onRangeChange(l->context, t.tid, ts_ns);
  }

  Registry registry_;
  std::atomic<ThreadState*> threads_{nullptr};
  std::atomic<uint32_t> next_index_{0};
  std::atomic<uint32_t> ring_slots_{kDefaultRingSlots};
  std::atomic<uint32_t> generation_{0};
  std::atomic<bool> enabled_{true};
  std::atomic<const RangeListener*> listener_{nullptr};
};

}  // namespace argus::capture::nvtx
