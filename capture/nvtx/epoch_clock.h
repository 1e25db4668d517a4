// EpochClock: the capture clock, int64 ns since the Unix epoch (DESIGN.md §2), read on
// training threads for every NVTX call.
//
// CLOCK_MONOTONIC plus an offset fixed once (CLOCK_REALTIME - CLOCK_MONOTONIC at the first
// use): the same price as CLOCK_REALTIME (both are vDSO reads, ~20 ns with a TSC clock
// source), but an NTP step during the run cannot make a range end before it began or
// reorder one thread's events. The cost: the epoch value drifts from wall time by whatever
// NTP slews during the run (ppm). Every source of one process must use this clock so that
// their events compare (docs/capture/nvtx.md, "Clock").
#pragma once

#include <time.h>

#include <cstdint>

namespace argus::capture::nvtx {

class EpochClock {
 public:
  // Thread-safe: the offset is computed once (a function-local static), then only read.
  static int64_t nowNs() { return monotonicNs() + offsetNs(); }
  // Unix-epoch ns of a CLOCK_MONOTONIC reading (for sources that get monotonic times).
  static int64_t fromMonotonicNs(int64_t mono_ns) { return mono_ns + offsetNs(); }
  static int64_t offsetNs() {
    static const int64_t offset = computeOffset();
    return offset;
  }

 private:
  static int64_t read(clockid_t id) {
    timespec ts;
    clock_gettime(id, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  }
  static int64_t monotonicNs() { return read(CLOCK_MONOTONIC); }
  // The realtime - monotonic difference of the closest pair of three tries (a preemption
  // between the two reads would skew one pair).
  static int64_t computeOffset() {
    int64_t best_gap = INT64_MAX, offset = 0;
    for (int i = 0; i < 3; ++i) {
      int64_t m0 = read(CLOCK_MONOTONIC), r = read(CLOCK_REALTIME), m1 = read(CLOCK_MONOTONIC);
      if (m1 - m0 < best_gap) {
        best_gap = m1 - m0;
        offset = r - (m0 + (m1 - m0) / 2);
      }
    }
    return offset;
  }
};

}  // namespace argus::capture::nvtx
