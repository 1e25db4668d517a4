// RecordRing: a single-producer single-consumer ring of 32-byte Record slots, one per
// training thread. The thread writes (never blocks: when the ring is full the caller drops
// the event and counts it); the collector's drain reads. Memory is fixed at construction.
//
// Positions are free-running uint64 slot counters (never wrap in practice); slot i lives at
// i & mask. Writers fill slots past head(), then publish() them all at once (release), so the
// reader never sees a name definition without its text or an event without its definition.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>

#include "capture/nvtx/nvtx_record.h"

namespace argus::capture::nvtx {

class RecordRing {
 public:
  // REQUIRES: slots is a power of two >= 64.
  explicit RecordRing(uint32_t slots) : mask_(slots - 1), slots_(new Record[slots]) {}
  RecordRing(const RecordRing&) = delete;
  RecordRing& operator=(const RecordRing&) = delete;

  uint32_t capacity() const { return mask_ + 1; }

  // ---- producer side (the owning thread) ----
  // Free slots, re-reading the consumer's position only when the cached one says "full".
  uint64_t freeSlots(uint64_t wanted) {
    uint64_t free = capacity() - (head_local_ - tail_cache_);
    if (free >= wanted) return free;
    tail_cache_ = tail_.load(std::memory_order_acquire);
    return capacity() - (head_local_ - tail_cache_);
  }
  // The slot at the next unpublished position + `i`.
  Record& at(uint64_t i) { return slots_[(head_local_ + i) & mask_]; }
  // Copies `n` text bytes into the slots starting at unpublished position + `i`.
  void writeText(uint64_t i, const char* text, uint32_t n) {
    char* base = reinterpret_cast<char*>(slots_.get());
    size_t ring_bytes = size_t{capacity()} * sizeof(Record);
    size_t off = ((head_local_ + i) & mask_) * sizeof(Record);
    size_t first = n < ring_bytes - off ? n : ring_bytes - off;
    std::memcpy(base + off, text, first);
    std::memcpy(base, text + first, n - first);  // wrapped tail (usually 0 bytes)
  }
  // Makes `n` written slots visible to the consumer.
  void publish(uint64_t n) {
    head_local_ += n;
    head_.store(head_local_, std::memory_order_release);
  }

  // ---- consumer side (the drain) ----
  uint64_t head() const { return head_.load(std::memory_order_acquire); }
  uint64_t tail() const { return tail_.load(std::memory_order_relaxed); }
  const Record& slot(uint64_t pos) const { return slots_[pos & mask_]; }
  // Copies `n` text bytes from the slots starting at `pos`.
  void readText(uint64_t pos, char* out, uint32_t n) const {
    const char* base = reinterpret_cast<const char*>(slots_.get());
    size_t ring_bytes = size_t{capacity()} * sizeof(Record);
    size_t off = (pos & mask_) * sizeof(Record);
    size_t first = n < ring_bytes - off ? n : ring_bytes - off;
    std::memcpy(out, base + off, first);
    std::memcpy(out + first, base, n - first);
  }
  // Hands slots before `pos` back to the producer.
  void release(uint64_t pos) { tail_.store(pos, std::memory_order_release); }

 private:
  const uint32_t mask_;
  std::unique_ptr<Record[]> slots_;
  // Producer-owned (no sharing with the consumer's line).
  alignas(64) uint64_t head_local_ = 0;
  uint64_t tail_cache_ = 0;
  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<uint64_t> tail_{0};
};

}  // namespace argus::capture::nvtx
