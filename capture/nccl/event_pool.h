// Event and EventPool: the handles the NCCL profiler plugin gives NCCL (docs/capture/nccl.md).
// Every startEvent takes one Event from a pool allocated once at the first init: no
// allocation per event. The free list is a lock-free stack (tagged head against ABA), so
// NCCL's user threads and proxy threads acquire concurrently without a lock; an empty pool
// refuses (the caller counts the drop).
//
// A finished operation is not free at once: NCCL may still hand its pointer back as the
// parent of a late child (a ProxyOp that starts after its collective completed). It is
// retired (any thread), and the single consumer's recycle() frees only those retired before
// its previous call, so a retired operation stays valid, and recognizably finished, for at
// least one collect interval. Its children are released at their stop.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "capture/nccl/record_queue.h"

namespace argus::capture::nccl {

enum class EventKind : uint8_t { kFree, kGroup, kOperation, kProxyOp, kProxyStep, kKernelCh };

// One live NCCL profiler event. Fields by kind:
//  - kOperation (a Coll or P2p): `record` is written by the starting thread before any
//    child exists; children (ProxyOp, ProxyStep, KernelCh, possibly on proxy threads) add
//    into the atomics and hold a reference each. Whoever drops the last reference (the
//    Coll's own stopEvent or a child's) publishes the record.
//  - kProxyOp, kKernelCh: `operation` is their Coll / P2p (they hold a reference on it).
//  - kProxyStep: `operation` as above; the step's states are tracked in plain fields, since
//    one proxy thread drives a step from start to stop.
struct Event {
  std::atomic<EventKind> kind{EventKind::kFree};
  uint32_t index = 0;  // in the pool (free-list links)
  // kOperation: references held by NCCL (until its stopEvent), by each live child, and one
  // per kernel channel expected (`holds`, released by their stops); 0 = published.
  std::atomic<uint32_t> refs{0};
  std::atomic<uint32_t> holds{0};
  std::atomic<bool> stopped{false};  // NCCL's stopEvent came
  CollectiveRecord record;
  std::atomic<int64_t> end_ns{0};
  std::atomic<int64_t> peer_wait_ns{0}, send_ns{0}, recv_wait_ns{0}, local_ns{0};
  std::atomic<uint64_t> send_bytes{0}, recv_bytes{0};
  std::atomic<uint64_t> gpu_start{UINT64_MAX}, gpu_stop{0};  // UINT64_MAX: no start seen
  std::atomic<int64_t> clock_lag_ns{INT64_MAX};
  std::atomic<uint32_t> steps{0}, channels{0};
  // children
  Event* operation = nullptr;
  // kProxyStep: current state (-1 before the first) since when, and the sums of closed states
  int state = -1;
  int64_t since_ns = 0;
  uint64_t trans_bytes = 0;
  int64_t peer_wait = 0, send = 0, recv_wait = 0, local = 0;
  bool sent = false;  // reached SendWait: its bytes count as sent
  // kKernelCh
  uint64_t ch_start = 0;  // start pTimer
};

class EventPool {
 public:
  // Allocates `capacity` events (REQUIRES: 1 <= capacity < 2^31).
  explicit EventPool(uint32_t capacity);
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;

  // Any thread, lock-free. Returns nullptr when every event is in use.
  Event* acquire();
  // Any thread: `e` is free again at once. For events nothing can name after their stop
  // (NCCL stops a ProxyOp after its steps, and kernel channels and steps have no children).
  // REQUIRES: from acquire(), not released or retired yet.
  void release(Event* e);
  // Any thread: `e` (an operation) is finished, but a late child may still name it as its
  // parent: freed by the second recycle() from now. REQUIRES: as release().
  void retire(Event* e);
  // One consumer thread: frees the events retired before the previous call.
  void recycle();
  // Events acquired and not yet freed (retired ones included). Approximate under concurrency.
  uint32_t inUse() const { return in_use_.load(std::memory_order_relaxed); }
  Event& at(uint32_t index) { return events_[index]; }
  // Whether p points at an event of this pool (descriptors from NCCL are checked with it
  // before a parent pointer is followed).
  bool owns(const void* p) const;
  uint32_t capacity() const { return capacity_; }

 private:
  static constexpr uint64_t kIndexMask = 0xffffffffu;
  const uint32_t capacity_;
  std::unique_ptr<Event[]> events_;
  std::unique_ptr<std::atomic<uint32_t>[]> next_;  // list links: index + 1, 0 = end
  alignas(64) std::atomic<uint64_t> head_{0};      // free: tag << 32 | (index + 1), 0 = empty
  alignas(64) std::atomic<uint32_t> retired_{0};   // retired since the last recycle: index + 1
  std::atomic<uint32_t> in_use_{0};
  uint32_t quarantined_ = 0;  // recycle()'s thread: retired before the last recycle
};

}  // namespace argus::capture::nccl
