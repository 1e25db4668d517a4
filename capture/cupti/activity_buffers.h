// ActivityBuffers: the bounded pool of buffers CUPTI fills with activity records, and the
// two callbacks CUPTI calls for them (cuptiActivityRegisterCallbacks).
//
// CUPTI asks for a buffer whenever its current one is full, on whatever thread is making
// records at that moment (often a training thread inside cudaLaunchKernel), and hands
// buffers back on its worker thread or on the thread calling cuptiActivityFlushAll. So
// both callbacks only move an index between two lock-free queues: a request pops a free
// buffer (none left: CUPTI gets no buffer and drops records, which it counts; we count
// the refusal), a completion queues the buffer for our draining thread, which decodes it
// and recycles it. Memory is one block of pool_bytes, allocated once: the bound on what
// GPU records can cost the training process, however slow the drain.
//
// CUPTI's callbacks carry no user pointer: one instance per process is bound to them.
// A buffer that is not ours (another CUPTI client's, e.g. torch.profiler's, delivered to
// our callback) is left untouched and counted.
#pragma once

#include <cupti_activity.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "capture/cupti/index_queue.h"

namespace argus::capture::cupti {

struct BufferOptions {
  size_t buffer_bytes = size_t{1} << 20;  // one buffer (rounded up to 4 KiB, at least 64 KiB)
  size_t pool_bytes = size_t{16} << 20;   // all buffers (at least one buffer, at most 4,096)
};

// Counters since construction; read with relaxed loads (a snapshot, not a transaction).
struct BufferStats {
  uint64_t requests = 0;         // CUPTI asked for a buffer
  uint64_t refused = 0;          // ... and the pool had none free: CUPTI drops records
  uint64_t completions = 0;      // buffers handed back with records
  uint64_t empty_completions = 0;  // buffers handed back with no valid bytes
  uint64_t foreign = 0;          // completions of buffers not from this pool (ignored)
  uint64_t bad_completions = 0;  // a buffer handed back that was not lent (ignored)
  uint64_t valid_bytes = 0;      // record bytes handed back
  uint64_t adopted = 0;          // buffers filled by adopt() (copies of another client's records)
  uint64_t adopt_refused = 0;    // adopt() runs dropped: no free buffer
};

class ActivityBuffers {
 public:
  explicit ActivityBuffers(BufferOptions options);
  // Unbinds. The block is freed unless CUPTI still holds one of its buffers: then it is
  // leaked on purpose (CUPTI may still write into it).
  ~ActivityBuffers();
  ActivityBuffers(const ActivityBuffers&) = delete;
  ActivityBuffers& operator=(const ActivityBuffers&) = delete;

  // Makes this the instance the static callbacks serve. Returns false when another
  // instance is bound.
  bool bind();
  void unbind();
  bool bound() const;

  // The functions registered with cuptiActivityRegisterCallbacks. Without a bound
  // instance a request gets no buffer. A completed buffer from outside our pool goes to
  // the guest's callback (ActivityHandover::forwardToGuest), if any.
  static void CUPTIAPI onBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI onBufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid);

  // Copies the records of another client's completed buffer (torch.profiler's, while our
  // source has lent it the API: ActivityHandover) into free buffers of ours, as runs of
  // whole records found with `next` (cuptiActivityGetNextRecord), and queues them as
  // completed, in order. Any thread; never blocks; without a free buffer the rest of the
  // records are dropped and counted. Returns the bytes copied.
  using NextRecordFn = CUptiResult(CUPTIAPI*)(uint8_t*, size_t, CUpti_Activity**);
  size_t adopt(uint8_t* buffer, size_t valid, NextRecordFn next);

  // A completed buffer, owned by the draining thread until recycle().
  struct Completed {
    uint8_t* data = nullptr;
    size_t valid = 0;  // <= bufferBytes()
    uint32_t index = 0;
    uint32_t clock_epoch = 0;  // clockEpoch() when the buffer was completed
  };
  // The oldest completed buffer; false when none. One draining thread at a time.
  bool popCompleted(Completed* out);
  // Returns a buffer from popCompleted() to the free pool.
  void recycle(const Completed& c);

  // Clock epochs: every completed buffer is tagged with the epoch current at completion.
  // The source starts a new one when the clock CUPTI stamps records with changes (a guest's
  // timestamp callback), after a forced flush: its records then decode with the right clock.
  uint32_t clockEpoch() const { return clock_epoch_.load(std::memory_order_acquire); }
  uint32_t newClockEpoch() { return clock_epoch_.fetch_add(1, std::memory_order_acq_rel) + 1; }

  uint32_t count() const { return count_; }
  size_t bufferBytes() const { return buffer_bytes_; }
  // Buffers CUPTI holds now (lent and not yet handed back).
  uint32_t lent() const { return lent_.load(std::memory_order_relaxed); }
  BufferStats stats() const;

 private:
  enum State : uint8_t { kFree, kLent, kCompleted };
  void request(uint8_t** buffer, size_t* size, size_t* max_records);
  // False when `buffer` is nowhere in our block (another client's, to be forwarded).
  bool complete(uint8_t* buffer, size_t size, size_t valid);
  // Buffer i, holding `valid` bytes of records, to the draining thread.
  void queueCompleted(uint32_t i, size_t valid);

  size_t buffer_bytes_;
  uint32_t count_;
  uint8_t* block_ = nullptr;
  std::unique_ptr<std::atomic<uint8_t>[]> state_;
  std::unique_ptr<std::atomic<size_t>[]> valid_;
  std::unique_ptr<std::atomic<uint32_t>[]> epoch_;  // per buffer: clock_epoch_ at completion
  IndexQueue free_;
  IndexQueue completed_;
  std::atomic<uint32_t> lent_{0};
  std::atomic<uint32_t> clock_epoch_{0};
  struct Counters {
    std::atomic<uint64_t> requests{0}, refused{0}, completions{0}, empty_completions{0}, foreign{0}, bad_completions{0},
        valid_bytes{0}, adopted{0}, adopt_refused{0};
  } counters_;
};

}  // namespace argus::capture::cupti
