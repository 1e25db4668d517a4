// CUPTI timestamps -> Unix-epoch ns (DESIGN.md §2: sources convert at the source).
//
// CUPTI stamps records on its own ns clock (CLOCK_REALTIME by default on Linux, but
// CLOCK_MONOTONIC_RAW on WSL), or, once another client installed one with
// cuptiActivityRegisterTimestampCallback, on that client's clock, in its units: Kineto
// installs a TSC reader (CPU ticks, not ns) when torch.profiler starts, for the rest of the
// process. We never install one (the setting is process-wide). Instead we map the clock in
// use onto the epoch clock the shim's CPU-side sources stamp with (the NVTX source's
// EpochClock; CLOCK_REALTIME when none is given): read the epoch clock, the other clock,
// the epoch clock again, a few times; the tightest bracket bounds the reading. CUPTI's own
// clock is ns: only an offset is fitted. A guest's tick clock also has a rate, fitted over
// the longest baseline available. Re-calibrated periodically by the source's own thread (a
// clock step, or a clock that drifts against ours).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
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

// How one clock's readings map onto Unix ns: CUPTI's own clock by an offset; a tick clock
// (a guest's timestamp callback) linearly, unix = anchor_unix + (t - anchor_ticks) * ns_per_tick.
struct ClockMap {
  int64_t offset_ns = 0;  // unscaled: unix = t + offset_ns
  bool scaled = false;
  uint64_t anchor_ticks = 0;
  int64_t anchor_unix = 0;
  double ns_per_tick = 1.0;
  // False when the result is not a plausible Unix ns time (as cuptiToUnixNs).
  bool toUnix(uint64_t t, int64_t* unix_ns) const {
    if (!scaled) return cuptiToUnixNs(t, offset_ns, unix_ns);
    if (t == 0) return false;
    // The offset from the anchor in double (a double's ulp at 1.7e18 ns is 256 ns), the sum exact.
    const double delta = static_cast<double>(static_cast<int64_t>(t - anchor_ticks)) * ns_per_tick;
    if (!(delta > -4e18 && delta < 4e18)) return false;
    if (__builtin_add_overflow(anchor_unix, static_cast<int64_t>(delta), unix_ns)) return false;
    return *unix_ns > 0;
  }
};

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
  using TickFn = CUpti_TimestampCallbackFunc;  // uint64_t (*)(): a guest's timestamp callback
  using EpochFn = int64_t (*)();

  // Takes `samples` readings (at most 16) of `timestamp` (cuptiGetTimestamp) bracketed by
  // `epoch` (Unix ns) and updates the offset. Returns false, keeping the previous offset,
  // when CUPTI fails or no reading is usable. Called by one thread at a time.
  bool calibrate(TimestampFn timestamp, EpochFn epoch = realtimeNs, int samples = 7);
  // The same for a tick clock of unknown rate, which this ClockSync then maps (scaled). The
  // first call takes a second set of readings kFirstBaselineNs later for a first rate;
  // later calls fit the rate between the first reading and theirs (a baseline that grows,
  // a rate that sharpens). Returns false, keeping the previous map, when no reading is
  // usable or the rate is not plausible (1/1000 to 1000 ns per tick).
  bool calibrateTicks(TickFn ticks, EpochFn epoch = realtimeNs, int samples = 7);
  static constexpr int64_t kFirstBaselineNs = 2'000'000;

  // The current map (offset 0 before the first calibration); any thread.
  ClockMap map() const;
  // The current offset in ns (calibrate()'s; 0 for a tick clock).
  int64_t offset() const { return map().offset_ns; }
  bool calibrated() const { return calibrated_.load(std::memory_order_relaxed); }
  // Half the tightest bracket of the last calibration: the reading's uncertainty in ns.
  int64_t uncertainty() const { return uncertainty_.load(std::memory_order_relaxed); }

 private:
  void publish(const ClockMap& map, int64_t uncertainty);

  mutable std::mutex mu_;  // map_ (several fields, written by one thread, read by others)
  ClockMap map_;
  ClockSample first_{};  // calibrateTicks' first reading: one end of the rate's baseline
  std::atomic<int64_t> uncertainty_{0};
  std::atomic<bool> calibrated_{false};
};

}  // namespace argus::capture::cupti
