#include "capture/cupti/clock_sync.h"

#include <time.h>

#include <algorithm>

namespace argus::capture::cupti {

int64_t realtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

namespace {

// Up to 16 readings of `read` bracketed by `epoch`, into buf. Returns how many succeeded.
template <typename Read>
int takeSamples(Read read, ClockSync::EpochFn epoch, int samples, ClockSample* buf) {
  int got = 0;
  for (int i = 0, n = std::min(samples, 16); i < n; ++i) {
    ClockSample s;
    s.before_ns = epoch();
    if (!read(&s.cupti_ns)) continue;
    s.after_ns = epoch();
    buf[got++] = s;
  }
  return got;
}

// The usable reading with the tightest bracket, or nullptr.
const ClockSample* tightest(const ClockSample* buf, int n) {
  const ClockSample* best = nullptr;
  for (int i = 0; i < n; ++i) {
    const ClockSample& s = buf[i];
    if (s.after_ns < s.before_ns || s.cupti_ns == 0 || s.cupti_ns > static_cast<uint64_t>(INT64_MAX)) continue;
    if (best == nullptr || s.after_ns - s.before_ns < best->after_ns - best->before_ns) best = &s;
  }
  return best;
}

int64_t mid(const ClockSample& s) { return s.before_ns + (s.after_ns - s.before_ns) / 2; }

}  // namespace

std::optional<int64_t> offsetFromSamples(std::span<const ClockSample> samples, std::optional<int64_t> previous) {
  const ClockSample* best = tightest(samples.data(), static_cast<int>(samples.size()));
  if (best == nullptr) return std::nullopt;
  const int64_t cupti = static_cast<int64_t>(best->cupti_ns);
  int64_t offset;
  if (__builtin_sub_overflow(mid(*best), cupti, &offset)) return std::nullopt;
  if (previous) {
    int64_t mapped;
    if (!__builtin_add_overflow(cupti, *previous, &mapped) && mapped >= best->before_ns && mapped <= best->after_ns) return previous;
  }
  return offset;
}

bool ClockSync::calibrate(TimestampFn timestamp, EpochFn epoch, int samples) {
  if (timestamp == nullptr || epoch == nullptr || samples <= 0) return false;
  ClockSample buf[16];
  int got = takeSamples([timestamp](uint64_t* t) { return timestamp(t) == CUPTI_SUCCESS; }, epoch, samples, buf);
  std::optional<int64_t> previous;
  if (calibrated()) previous = offset();
  std::optional<int64_t> off = offsetFromSamples(std::span<const ClockSample>(buf, got), previous);
  if (!off) return false;
  const ClockSample* best = tightest(buf, got);
  ClockMap m;
  m.offset_ns = *off;
  publish(m, (best->after_ns - best->before_ns) / 2);
  return true;
}

bool ClockSync::calibrateTicks(TickFn ticks, EpochFn epoch, int samples) {
  if (ticks == nullptr || epoch == nullptr || samples <= 0) return false;
  auto read = [ticks](uint64_t* t) {
    *t = ticks();
    return true;
  };
  ClockSample buf[16];
  const ClockSample* best = tightest(buf, takeSamples(read, epoch, samples, buf));
  if (best == nullptr) return false;
  ClockSample from = first_;
  if (from.cupti_ns == 0) {
    // A first rate from two sets of readings kFirstBaselineNs apart (once per clock).
    from = *best;
    const int64_t until = mid(from) + kFirstBaselineNs;
    for (int64_t now = epoch(); now < until && now >= from.before_ns; now = epoch()) {
    }  // (a step back of the epoch clock ends the wait; the rate check below judges it)
    best = tightest(buf, takeSamples(read, epoch, samples, buf));
    if (best == nullptr) return false;
  }
  const double dt = static_cast<double>(static_cast<int64_t>(best->cupti_ns - from.cupti_ns));
  const double ns_per_tick = static_cast<double>(mid(*best) - mid(from)) / dt;
  if (!(dt > 0 && ns_per_tick > 1e-3 && ns_per_tick < 1e3)) return false;
  first_ = from;
  ClockMap m;
  m.scaled = true;
  m.anchor_ticks = best->cupti_ns;
  m.anchor_unix = mid(*best);
  m.ns_per_tick = ns_per_tick;
  publish(m, (best->after_ns - best->before_ns) / 2);
  return true;
}

void ClockSync::publish(const ClockMap& map, int64_t uncertainty) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    map_ = map;
  }
  uncertainty_.store(uncertainty, std::memory_order_relaxed);
  calibrated_.store(true, std::memory_order_relaxed);
}

ClockMap ClockSync::map() const {
  std::lock_guard<std::mutex> lock(mu_);
  return map_;
}

}  // namespace argus::capture::cupti
