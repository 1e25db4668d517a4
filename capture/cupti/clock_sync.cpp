#include "capture/cupti/clock_sync.h"

#include <time.h>

#include <algorithm>

namespace argus::capture::cupti {

int64_t realtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::optional<int64_t> offsetFromSamples(std::span<const ClockSample> samples, std::optional<int64_t> previous) {
  const ClockSample* best = nullptr;
  for (const ClockSample& s : samples) {
    if (s.after_ns < s.before_ns || s.cupti_ns == 0 || s.cupti_ns > static_cast<uint64_t>(INT64_MAX)) continue;
    if (best == nullptr || s.after_ns - s.before_ns < best->after_ns - best->before_ns) best = &s;
  }
  if (best == nullptr) return std::nullopt;
  const int64_t cupti = static_cast<int64_t>(best->cupti_ns);
  int64_t mid = best->before_ns + (best->after_ns - best->before_ns) / 2;
  int64_t offset;
  if (__builtin_sub_overflow(mid, cupti, &offset)) return std::nullopt;
  if (previous) {
    int64_t mapped;
    if (!__builtin_add_overflow(cupti, *previous, &mapped) && mapped >= best->before_ns && mapped <= best->after_ns) return previous;
  }
  return offset;
}

bool ClockSync::calibrate(TimestampFn timestamp, EpochFn epoch, int samples) {
  if (timestamp == nullptr || epoch == nullptr || samples <= 0) return false;
  ClockSample buf[16];
  int n = std::min(samples, 16);
  int got = 0;
  for (int i = 0; i < n; ++i) {
    ClockSample s;
    s.before_ns = epoch();
    if (timestamp(&s.cupti_ns) != CUPTI_SUCCESS) continue;
    s.after_ns = epoch();
    buf[got++] = s;
  }
  std::optional<int64_t> previous;
  if (calibrated()) previous = offset();
  std::optional<int64_t> off = offsetFromSamples(std::span<const ClockSample>(buf, got), previous);
  if (!off) return false;
  int64_t tightest = INT64_MAX;
  for (int i = 0; i < got; ++i) {
    if (buf[i].after_ns >= buf[i].before_ns) tightest = std::min(tightest, buf[i].after_ns - buf[i].before_ns);
  }
  offset_.store(*off, std::memory_order_relaxed);
  uncertainty_.store(tightest / 2, std::memory_order_relaxed);
  calibrated_.store(true, std::memory_order_relaxed);
  return true;
}

}  // namespace argus::capture::cupti
