// SampleRing: the stack sampler's single-producer single-consumer ring of samples, written
// by the sampler thread and read by the collector's drain. Fixed memory; a full ring drops
// the sample (the producer counts it), never waits.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace argus::capture::stacks {

struct Sample {
  int64_t ts_ns = 0;   // epoch ns (the NVTX clock)
  uint64_t stack = 0;  // stack id
  uint32_t tid = 0;    // OS thread id
};

class SampleRing {
 public:
  // REQUIRES: slots is a power of two.
  explicit SampleRing(uint32_t slots) : mask_(slots - 1), slots_(new Sample[slots]) {}

  // Producer. False when full.
  bool push(const Sample& s) {
    uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) > mask_) return false;
    slots_[head & mask_] = s;
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  // Consumer: the samples published so far are [tail(), head()).
  uint64_t head() const { return head_.load(std::memory_order_acquire); }
  uint64_t tail() const { return tail_.load(std::memory_order_relaxed); }
  const Sample& at(uint64_t pos) const { return slots_[pos & mask_]; }
  void release(uint64_t pos) { tail_.store(pos, std::memory_order_release); }

 private:
  const uint64_t mask_;
  std::unique_ptr<Sample[]> slots_;
  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<uint64_t> tail_{0};
};

}  // namespace argus::capture::stacks
