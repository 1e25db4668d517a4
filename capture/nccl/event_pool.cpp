#include "capture/nccl/event_pool.h"

namespace argus::capture::nccl {

EventPool::EventPool(uint32_t capacity) : capacity_(capacity), events_(new Event[capacity]), next_(new std::atomic<uint32_t>[capacity]) {
  // Free list in index order: event i links to i + 1.
  for (uint32_t i = 0; i < capacity; ++i) {
    events_[i].index = i;
    next_[i].store(i + 1 < capacity ? i + 2 : 0, std::memory_order_relaxed);
  }
  head_.store(1, std::memory_order_release);
}

Event* EventPool::acquire() {
  uint64_t head = head_.load(std::memory_order_acquire);
  for (;;) {
    uint32_t index = static_cast<uint32_t>(head & kIndexMask);
    if (index == 0) return nullptr;
    // A stale link (another thread took and returned this event meanwhile) is harmless: the
    // tag then differs and the exchange fails.
    uint64_t next = next_[index - 1].load(std::memory_order_relaxed);
    uint64_t wanted = ((head >> 32) + 1) << 32 | next;
    if (head_.compare_exchange_weak(head, wanted, std::memory_order_acquire, std::memory_order_acquire)) {
      in_use_.fetch_add(1, std::memory_order_relaxed);
      return &events_[index - 1];
    }
  }
}

void EventPool::retire(Event* e) {
  uint32_t index = e->index + 1;
  uint32_t head = retired_.load(std::memory_order_relaxed);
  do {
    next_[index - 1].store(head, std::memory_order_relaxed);
  } while (!retired_.compare_exchange_weak(head, index, std::memory_order_release, std::memory_order_relaxed));
}

void EventPool::recycle() {
  uint32_t taken = retired_.exchange(0, std::memory_order_acquire);
  for (uint32_t i = quarantined_; i != 0;) {
    uint32_t next = next_[i - 1].load(std::memory_order_relaxed);
    release(&events_[i - 1]);
    i = next;
  }
  quarantined_ = taken;
}

void EventPool::release(Event* e) {
  e->kind.store(EventKind::kFree, std::memory_order_relaxed);
  in_use_.fetch_sub(1, std::memory_order_relaxed);
  uint32_t index = e->index + 1;
  uint64_t head = head_.load(std::memory_order_relaxed);
  for (;;) {
    next_[index - 1].store(static_cast<uint32_t>(head & kIndexMask), std::memory_order_relaxed);
    uint64_t wanted = ((head >> 32) + 1) << 32 | index;
    if (head_.compare_exchange_weak(head, wanted, std::memory_order_release, std::memory_order_relaxed)) return;
  }
}

bool EventPool::owns(const void* p) const {
  auto a = reinterpret_cast<uintptr_t>(p), lo = reinterpret_cast<uintptr_t>(events_.get());
  return a >= lo && a < lo + uintptr_t{capacity_} * sizeof(Event) && (a - lo) % sizeof(Event) == 0;
}

}  // namespace argus::capture::nccl
