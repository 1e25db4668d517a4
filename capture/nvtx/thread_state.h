// ThreadState: everything one training thread needs to record NVTX calls without locks or
// allocation: its ring, its name cache, its push/pop nesting per domain, its counters.
// Created on the thread's first NVTX call (Recorder::attach), kept in the Recorder's list
// for the life of the process, and reused by a later thread once the drain has emptied it
// after its thread exited (status kActive -> kRetired -> kFree -> kActive).
#pragma once

#include <atomic>
#include <cstdint>

#include "capture/nvtx/name_cache.h"
#include "capture/nvtx/nvtx_registry.h"
#include "capture/nvtx/record_ring.h"

namespace argus::capture::nvtx {

// Push/pop nesting of one domain on one thread. Levels below kMaxTrackedDepth remember
// whether their push was recorded, so that the pop of a dropped push is dropped too and a
// full ring can never leave the drain with a pop that closes the wrong range.
struct DomainStack {
  static constexpr uint32_t kMaxTrackedDepth = 128;  // the assembler's default max_range_depth
  uint32_t depth = 0;                                // open pushes, recorded or not
  uint64_t recorded[2] = {};                         // bit L: the push at level L was recorded
  bool isRecorded(uint32_t level) const { return level < kMaxTrackedDepth && (recorded[level >> 6] >> (level & 63)) & 1; }
  void setRecorded(uint32_t level, bool on) {
    uint64_t bit = uint64_t{1} << (level & 63);
    recorded[level >> 6] = on ? (recorded[level >> 6] | bit) : (recorded[level >> 6] & ~bit);
  }
};

// Written by the owning thread only (a relaxed load + store, no locked instruction), read by
// the drain at any time.
inline void bump(std::atomic<uint64_t>& counter) {
  counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

struct ThreadCounters {
  std::atomic<uint64_t> dropped{0};         // ring full (or capture off): events not recorded
  std::atomic<uint64_t> depth_overflow{0};  // pushes beyond kMaxTrackedDepth (with their pops)
  std::atomic<uint64_t> unmatched_pops{0};  // pops with no open push in their domain
  std::atomic<uint64_t> bad_handles{0};     // domain handles we never issued
  std::atomic<uint64_t> truncated{0};       // names cut to Registry::kMaxTextBytes
};

struct ThreadState {
  enum Status : uint8_t { kActive = 0, kRetired = 1, kFree = 2 };

  ThreadState(uint32_t index_in, uint32_t ring_slots) : index(index_in), ring(ring_slots) {}
  ThreadState(const ThreadState&) = delete;
  ThreadState& operator=(const ThreadState&) = delete;

  // Resets what belongs to the previous owner (REQUIRES: status was kFree, ring drained).
  void resetForNewThread(uint32_t tid_in, uint32_t generation_in) {
    tid = tid_in;
    generation = generation_in;
    names.clear();
    for (DomainStack& s : stacks) s = DomainStack{};
    reserved = 0;
  }

  const uint32_t index;         // dense, for the drain's per-thread tables
  ThreadState* next = nullptr;  // Recorder list; set before publication, then constant
  std::atomic<uint8_t> status{kActive};
  uint32_t tid = 0;         // OS thread id of the owner (TraceEvent::thread)
  uint32_t generation = 0;  // Recorder generation the name cache belongs to
  RecordRing ring;
  NameCache names;
  DomainStack stacks[Registry::kMaxDomains];
  uint32_t reserved = 0;    // ring slots kept for the pops of recorded pushes
  uint64_t next_range = 0;  // nvtxRangeStart ids issued by this state
  ThreadCounters counters;
  char text[Registry::kMaxTextBytes];  // a W message converted to UTF-8
};

}  // namespace argus::capture::nvtx
