// CUPTI timestamps -> Unix-epoch ns (DESIGN.md §2: sources convert at the source).
//
// CUPTI stamps records on its own clock (CLOCK_REALTIME by default on Linux, but
// CLOCK_MONOTONIC_RAW on WSL, and whatever another client installed with
// cuptiActivityRegisterTimestampCallback). We do not install a timestamp callback: that
// setting is process-wide and would change torch.profiler's clock too. Instead we measure
// the offset against the epoch clock the shim's CPU-side sources stamp with (the NVTX
// source's EpochClock; CLOCK_REALTIME when none is given): read it, cuptiGetTimestamp, read
// it again, a few times; the tightest bracket bounds the offset. Re-calibrated periodically
// by the source's own thread (a clock step, or a CUPTI clock that drifts against ours).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>

#include "capture/cupti/cupti_api.h"

namespace argus::capture::cupti {

// Converts one CUPTI timestamp. Returns false when the result is not a plausible Unix ns
// time (0 means "CUPTI could not collect it"; beyond int64; negative after the offset).
inline bool cuptiToUnixNs(uint64_t cupti_ns, int64_t offset_ns, int64_t* unix_ns) {
  if (cupti_ns == 0 || cupti_ns > static_cast<uint64_t>(INT64_MAX)) return false;
  if (__builtin_add_overflow(static_cast<int64_t>(cupti_ns), offset_ns, unix_ns)) return false;
  return *unix_ns > 0;
}

// One reading: CLOCK_REALTIME before and after a CUPTI timestamp.
struct ClockSample {
  int64_t before_ns = 0;
  uint64_t cupti_ns = 0;
  int64_t after_ns = 0;
};

// The offset (unix = cupti + offset) the samples support: from the tightest bracket, its
// midpoint minus the CUPTI reading. When `previous` is inside that bracket it is kept, so
// that a stable clock pair (the usual case: both CLOCK_REALTIME, offset 0) gives one
// unchanging offset instead of jittering by the call overhead at every calibration.
// Returns nullopt when no sample is usable (after < before, CUPTI reading 0 or > int64).
std::optional<int64_t> offsetFromSamples(std::span<const ClockSample> samples, std::optional<int64_t> previous);

// CLOCK_REALTIME in ns.
int64_t realtimeNs();

class ClockSync {
 public:
  using TimestampFn = CUptiResult(CUPTIAPI*)(uint64_t*);
  using EpochFn = int64_t (*)();

  // Takes `samples` readings (at most 16) of `timestamp` (cuptiGetTimestamp) bracketed by
  // `epoch` (Unix ns) and updates the offset. Returns false, keeping the previous offset,
  // when CUPTI fails or no reading is usable. Called by one thread at a time.
  bool calibrate(TimestampFn timestamp, EpochFn epoch = realtimeNs, int samples = 7);
  // The current offset in ns (0 before the first calibration); any thread.
  int64_t offset() const { return offset_.load(std::memory_order_relaxed); }
  bool calibrated() const { return calibrated_.load(std::memory_order_relaxed); }
  // Half the tightest bracket of the last calibration: the offset's uncertainty in ns.
  int64_t uncertainty() const { return uncertainty_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> offset_{0};
  std::atomic<int64_t> uncertainty_{0};
  std::atomic<bool> calibrated_{false};
};

}  // namespace argus::capture::cupti
