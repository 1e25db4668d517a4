// CollectiveRecord and RecordQueue: how a finished NCCL operation travels from NCCL's
// threads (the user thread that enqueued it, or the proxy thread whose event finished it
// last) to the collector's Drain (nccl_drain.h).
//
// RecordQueue is a bounded multi-producer single-consumer queue (Vyukov's bounded queue:
// a sequence number per cell). push() never waits: a full queue refuses the record and the
// caller counts the drop. Memory is fixed at construction.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "model/step_record.h"

namespace argus::capture::nccl {

// One collective or point-to-point operation, with what its child events said. Raw sums:
// the Drain derives the span and the wait share (docs/capture/nccl.md, "Wait vs transfer").
struct CollectiveRecord {
  uint64_t comm_hash = 0;
  uint64_t bytes = 0;          // count x datatype size; 0 when the datatype is unknown
  int64_t host_start_ns = 0;   // startEvent of the Coll / P2p (NCCL enqueues it)
  int64_t host_end_ns = 0;     // the latest stopEvent of the operation and its children
  uint64_t gpu_start = 0;      // earliest KernelCh start pTimer (GPU globaltimer ns); 0: none
  uint64_t gpu_stop = 0;       // latest KernelCh stop pTimer; 0: none
  int64_t peer_wait_ns = 0;    // send steps waiting for the receiver's credit (a late peer)
  int64_t send_ns = 0;         // send steps on the network (transmitting)
  int64_t recv_wait_ns = 0;    // receive steps waiting for data (a late peer or the network)
  int64_t local_ns = 0;        // steps waiting for the local GPU or a flush
  uint64_t send_bytes = 0;     // transfer sizes of the send steps that reached SendWait
  uint64_t recv_bytes = 0;     // transfer sizes of the receive steps
  int64_t cpu_clock_lag_ns = INT64_MAX;  // min over this op's KernelCh calls of (CPU now - pTimer)
  uint32_t peer = model::CollectiveStat::kNoPeer;
  uint32_t thread = 0;  // OS thread that enqueued it
  uint32_t steps = 0;   // proxy steps seen (0: not sampled)
  uint16_t channels = 0;  // kernel channels seen
  model::CollectiveOp op = model::CollectiveOp::kOther;
  uint8_t algo = 0;   // descriptor_names.h indices
  uint8_t proto = 0;
  uint8_t flags = 0;  // kRecordP2p
};
inline constexpr uint8_t kRecordP2p = 1;
static_assert(std::is_trivially_copyable_v<CollectiveRecord>);

class RecordQueue {
 public:
  // REQUIRES: capacity is a power of two >= 2.
  explicit RecordQueue(uint32_t capacity) : mask_(capacity - 1), cells_(new Cell[capacity]) {
    for (uint32_t i = 0; i < capacity; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
  }
  RecordQueue(const RecordQueue&) = delete;
  RecordQueue& operator=(const RecordQueue&) = delete;

  uint32_t capacity() const { return mask_ + 1; }

  // Any thread. Returns false (nothing written) when the queue is full.
  bool push(const CollectiveRecord& r) {
    uint64_t pos = enqueue_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& c = cells_[pos & mask_];
      uint64_t seq = c.seq.load(std::memory_order_acquire);
      int64_t diff = static_cast<int64_t>(seq - pos);
      if (diff == 0) {
        if (enqueue_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          c.record = r;
          c.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;
      } else {
        pos = enqueue_.load(std::memory_order_relaxed);
      }
    }
  }

  // The consumer only. Returns false when the next record is not published yet.
  bool pop(CollectiveRecord* out) {
    Cell& c = cells_[dequeue_ & mask_];
    uint64_t seq = c.seq.load(std::memory_order_acquire);
    if (static_cast<int64_t>(seq - (dequeue_ + 1)) < 0) return false;
    *out = c.record;
    c.seq.store(dequeue_ + mask_ + 1, std::memory_order_release);
    ++dequeue_;
    return true;
  }

 private:
  struct Cell {
    std::atomic<uint64_t> seq;
    CollectiveRecord record;
  };
  const uint64_t mask_;
  std::unique_ptr<Cell[]> cells_;
  alignas(64) std::atomic<uint64_t> enqueue_{0};
  alignas(64) uint64_t dequeue_ = 0;
};

}  // namespace argus::capture::nccl
