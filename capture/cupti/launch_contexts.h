// LaunchContexts: what an external correlation id we push stands for, so that the decoder
// can tell the StepAssembler which thread launched a kernel and when (docs/capture/cupti.md,
// "Launch attribution").
//
// On every NVTX range change of a thread (push, pop, and the marks the NVTX source turns
// into events), CuptiSource::onRangeChange opens a new context {thread, ts_ns} here and
// makes its id the thread's CUPTI external correlation id (kind CUSTOM2). CUPTI then
// precedes each launch API record of that thread with an external-correlation record
// {our id, CUPTI correlation id}; the decoder looks the id up here. Every launch made
// under one context happened on that thread after ts_ns and before the thread's next
// range change, so ts_ns lies inside the same innermost range and the same step as the
// launch itself.
//
// A fixed ring of `capacity` slots (a power of two), indexed by id: open() on training
// threads never blocks or allocates; a context is found until `capacity` newer ones
// overwrite it (the decoder reads within a flush interval or two). Each slot is a seqlock
// (all fields atomics), so a concurrent overwrite reads as "not found", never as a mix.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace argus::capture::cupti {

class LaunchContexts {
 public:
  struct Context {
    uint32_t thread = 0;
    int64_t ts_ns = 0;
  };

  // `capacity` is rounded up to a power of two in [2, 2^24].
  explicit LaunchContexts(uint32_t capacity);

  // Opens a context and returns its id (never 0). Lock-free; any thread.
  uint64_t open(uint32_t thread, int64_t ts_ns) {
    uint64_t id = next_.fetch_add(1, std::memory_order_relaxed);
    Slot& s = slots_[id & mask_];
    // A seqlock without fences (TSan-friendly; plain moves on x86): a reader that sees any
    // field of this write also sees kWriting (or this id) when it reads the id again.
    s.id.store(kWriting, std::memory_order_relaxed);
    s.thread.store(thread, std::memory_order_release);
    s.ts_ns.store(ts_ns, std::memory_order_release);
    s.id.store(id, std::memory_order_release);
    return id;
  }

  // The context of `id`; false when it was never opened here or has been overwritten.
  bool find(uint64_t id, Context* out) const {
    if (id == 0 || id == kWriting) return false;
    const Slot& s = slots_[id & mask_];
    if (s.id.load(std::memory_order_acquire) != id) return false;
    Context c{s.thread.load(std::memory_order_acquire), s.ts_ns.load(std::memory_order_acquire)};
    if (s.id.load(std::memory_order_relaxed) != id) return false;  // overwritten meanwhile
    *out = c;
    return true;
  }

  uint32_t capacity() const { return mask_ + 1; }
  uint64_t opened() const { return next_.load(std::memory_order_relaxed) - 1; }

 private:
  static constexpr uint64_t kWriting = UINT64_MAX;
  struct Slot {
    std::atomic<uint64_t> id{0};
    std::atomic<int64_t> ts_ns{0};
    std::atomic<uint32_t> thread{0};
  };
  std::unique_ptr<Slot[]> slots_;
  uint32_t mask_;
  std::atomic<uint64_t> next_{1};
};

}  // namespace argus::capture::cupti
