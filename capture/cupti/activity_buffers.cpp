#include "capture/cupti/activity_buffers.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "capture/cupti/activity_handover.h"

namespace argus::capture::cupti {

namespace {

std::atomic<ActivityBuffers*> g_bound{nullptr};

constexpr size_t kAlign = 4096;  // CUPTI wants 8-byte aligned buffers; page-aligned is no worse
constexpr size_t kMinBuffer = size_t{64} << 10;
constexpr size_t kMaxBuffer = size_t{256} << 20;
constexpr uint32_t kMaxBuffers = 4096;

size_t bufferSize(size_t asked) {
  size_t b = std::clamp(asked, kMinBuffer, kMaxBuffer);
  return (b + kAlign - 1) / kAlign * kAlign;
}

uint32_t bufferCount(size_t pool, size_t buffer) {
  return static_cast<uint32_t>(std::clamp<size_t>(pool / buffer, 1, kMaxBuffers));
}

}  // namespace

ActivityBuffers::ActivityBuffers(BufferOptions options)
    : buffer_bytes_(bufferSize(options.buffer_bytes)),
      count_(bufferCount(options.pool_bytes, buffer_bytes_)),
      state_(new std::atomic<uint8_t>[count_]),
      valid_(new std::atomic<size_t>[count_]),
      epoch_(new std::atomic<uint32_t>[count_]),
      free_(count_),
      completed_(count_) {
  // Untouched pages cost no memory: RSS grows only with the buffers CUPTI actually fills.
  block_ = static_cast<uint8_t*>(std::aligned_alloc(kAlign, buffer_bytes_ * count_));
  if (block_ == nullptr) count_ = 0;  // every request refused, counted
  for (uint32_t i = 0; i < count_; ++i) {
    state_[i].store(kFree, std::memory_order_relaxed);
    valid_[i].store(0, std::memory_order_relaxed);
    epoch_[i].store(0, std::memory_order_relaxed);
    free_.push(i);
  }
}

ActivityBuffers::~ActivityBuffers() {
  unbind();
  if (lent() == 0) std::free(block_);
}

bool ActivityBuffers::bind() {
  ActivityBuffers* expected = nullptr;
  return g_bound.compare_exchange_strong(expected, this) || expected == this;
}

void ActivityBuffers::unbind() {
  ActivityBuffers* expected = this;
  g_bound.compare_exchange_strong(expected, nullptr);
}

bool ActivityBuffers::bound() const { return g_bound.load(std::memory_order_acquire) == this; }

void CUPTIAPI ActivityBuffers::onBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  if (ActivityBuffers* b = g_bound.load(std::memory_order_acquire)) {
    b->request(buffer, size, max_records);
    return;
  }
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;
}

void CUPTIAPI ActivityBuffers::onBufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid) {
  ActivityBuffers* b = g_bound.load(std::memory_order_acquire);
  if (b != nullptr && b->complete(buffer, size, valid)) return;
  // Not from our pool at all: a buffer the guest's callback lent (ActivityHandover).
  ActivityHandover::instance().forwardToGuest(context, stream, buffer, size, valid);
}

void ActivityBuffers::request(uint8_t** buffer, size_t* size, size_t* max_records) {
  counters_.requests.fetch_add(1, std::memory_order_relaxed);
  *max_records = 0;  // fill the buffer
  uint32_t i;
  if (!free_.pop(&i)) {
    counters_.refused.fetch_add(1, std::memory_order_relaxed);
    *buffer = nullptr;
    *size = 0;
    return;
  }
  state_[i].store(kLent, std::memory_order_relaxed);
  lent_.fetch_add(1, std::memory_order_relaxed);
  *buffer = block_ + size_t{i} * buffer_bytes_;
  *size = buffer_bytes_;
}

bool ActivityBuffers::complete(uint8_t* buffer, size_t size, size_t valid) {
  // Ours only if it is the start of one of our buffers: anything else belongs to another
  // CUPTI client (or is garbage) and is not ours to read or free.
  uintptr_t p = reinterpret_cast<uintptr_t>(buffer), base = reinterpret_cast<uintptr_t>(block_);
  bool in_block = block_ != nullptr && p >= base && (p - base) / buffer_bytes_ < count_;
  if (!in_block || (p - base) % buffer_bytes_ != 0) {
    counters_.foreign.fetch_add(1, std::memory_order_relaxed);
    return in_block;
  }
  uint32_t i = static_cast<uint32_t>((p - base) / buffer_bytes_);
  uint8_t expected = kLent;
  if (!state_[i].compare_exchange_strong(expected, kCompleted, std::memory_order_acq_rel)) {
    counters_.bad_completions.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  lent_.fetch_sub(1, std::memory_order_relaxed);
  // validSize can never exceed what we lent; a larger one is clamped, not trusted.
  valid = std::min({valid, size, buffer_bytes_});
  if (valid == 0) {
    counters_.empty_completions.fetch_add(1, std::memory_order_relaxed);
    state_[i].store(kFree, std::memory_order_relaxed);
    free_.push(i);
    return true;
  }
  counters_.completions.fetch_add(1, std::memory_order_relaxed);
  queueCompleted(i, valid);
  return true;
}

void ActivityBuffers::queueCompleted(uint32_t i, size_t valid) {
  counters_.valid_bytes.fetch_add(valid, std::memory_order_relaxed);
  valid_[i].store(valid, std::memory_order_relaxed);
  epoch_[i].store(clockEpoch(), std::memory_order_relaxed);
  completed_.push(i);  // capacity >= count_: never full
}

size_t ActivityBuffers::adopt(uint8_t* buffer, size_t valid, NextRecordFn next) {
  if (block_ == nullptr || buffer == nullptr || valid == 0 || next == nullptr) return 0;
  size_t run = 0, copied = 0;  // the run of whole records not copied yet starts at `run`
  // Copies [run, end) into one free buffer of ours, queued as completed.
  auto copy = [&](size_t end) {
    if (end <= run) return true;
    uint32_t i;
    if (!free_.pop(&i)) {
      counters_.adopt_refused.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    std::memcpy(block_ + size_t{i} * buffer_bytes_, buffer + run, end - run);
    state_[i].store(kCompleted, std::memory_order_relaxed);
    counters_.adopted.fetch_add(1, std::memory_order_relaxed);
    queueCompleted(i, end - run);
    copied += end - run;
    run = end;
    return true;
  };
  CUpti_Activity* record = nullptr;
  size_t last = 0;  // where the latest record starts
  bool first = true;
  while (next(buffer, valid, &record) == CUPTI_SUCCESS && record != nullptr) {
    size_t at = static_cast<size_t>(reinterpret_cast<uint8_t*>(record) - buffer);
    if (at >= valid || (!first && at <= last)) break;  // a walker that goes back, stays or leaves: stop there
    first = false;
    // The run up to this record would not fit one buffer: it ends before the previous one.
    if (at - run > buffer_bytes_ && !copy(last)) return copied;
    last = at;
  }
  if (valid - run > buffer_bytes_ && !copy(last)) return copied;
  if (valid - run <= buffer_bytes_) copy(valid);
  return copied;
}

bool ActivityBuffers::popCompleted(Completed* out) {
  uint32_t i;
  if (!completed_.pop(&i)) return false;
  *out = {block_ + size_t{i} * buffer_bytes_, valid_[i].load(std::memory_order_relaxed), i, epoch_[i].load(std::memory_order_relaxed)};
  return true;
}

void ActivityBuffers::recycle(const Completed& c) {
  if (c.index >= count_) return;
  uint8_t expected = kCompleted;
  if (!state_[c.index].compare_exchange_strong(expected, kFree, std::memory_order_acq_rel)) return;
  free_.push(c.index);
}

BufferStats ActivityBuffers::stats() const {
  auto r = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  return {r(counters_.requests), r(counters_.refused),         r(counters_.completions), r(counters_.empty_completions),
          r(counters_.foreign),  r(counters_.bad_completions), r(counters_.valid_bytes), r(counters_.adopted),
          r(counters_.adopt_refused)};
}

}  // namespace argus::capture::cupti
