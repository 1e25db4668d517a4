// IndexQueue: a bounded multi-producer multi-consumer FIFO of uint32 (buffer indexes),
// lock-free (D. Vyukov's bounded queue: one sequence number per cell). The activity
// buffers use two: free buffers, taken by CUPTI's buffer requests on whatever thread
// CUPTI runs them (a training thread inside a CUDA call, CUPTI's worker), and completed
// buffers, filled by CUPTI's completion callbacks and emptied by our draining thread.
// Nobody waits on a lock: push fails when full, pop when empty.
#pragma once

#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>

namespace argus::capture::cupti {

class IndexQueue {
 public:
  // Holds at least `capacity` values (rounded up to a power of two, at least 2).
  explicit IndexQueue(uint32_t capacity)
      : mask_(std::bit_ceil(capacity < 2 ? 2u : capacity) - 1), cells_(new Cell[mask_ + 1]) {
    for (uint64_t i = 0; i <= mask_; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
  }

  // Returns false (nothing stored) when full.
  bool push(uint32_t value) {
    uint64_t pos = tail_.load(std::memory_order_relaxed);
    Cell* cell;
    for (;;) {
      cell = &cells_[pos & mask_];
      int64_t diff = static_cast<int64_t>(cell->seq.load(std::memory_order_acquire) - pos);
      if (diff == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) break;
      } else if (diff < 0) {
        return false;
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
    cell->value = value;
    cell->seq.store(pos + 1, std::memory_order_release);
    return true;
  }

  // Returns false when empty.
  bool pop(uint32_t* value) {
    uint64_t pos = head_.load(std::memory_order_relaxed);
    Cell* cell;
    for (;;) {
      cell = &cells_[pos & mask_];
      int64_t diff = static_cast<int64_t>(cell->seq.load(std::memory_order_acquire) - (pos + 1));
      if (diff == 0) {
        if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) break;
      } else if (diff < 0) {
        return false;
      } else {
        pos = head_.load(std::memory_order_relaxed);
      }
    }
    *value = cell->value;
    cell->seq.store(pos + mask_ + 1, std::memory_order_release);
    return true;
  }

  uint32_t capacity() const { return static_cast<uint32_t>(mask_ + 1); }

 private:
  struct Cell {
    std::atomic<uint64_t> seq{0};
    uint32_t value = 0;  // published by seq (release / acquire)
  };
  const uint64_t mask_;
  std::unique_ptr<Cell[]> cells_;
  alignas(64) std::atomic<uint64_t> tail_{0};
  alignas(64) std::atomic<uint64_t> head_{0};
};

}  // namespace argus::capture::cupti
