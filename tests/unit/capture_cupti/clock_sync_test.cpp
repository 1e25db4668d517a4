// CUPTI timestamps to Unix ns: the conversion, the offset from bracketed samples, and a
// calibration against the real cuptiGetTimestamp (which answers without a driver).
#include "capture/cupti/clock_sync.h"

#include <doctest/doctest.h>

#include <vector>

#include "activity_records.h"

using namespace argus::capture::cupti;

TEST_CASE("cuptiToUnixNs: offset added, unusable times refused") {
  int64_t t = 0;
  CHECK(cuptiToUnixNs(1'000, 500, &t));
  CHECK(t == 1'500);
  CHECK(cuptiToUnixNs(1'796'000'000'000'000'000ull, -7, &t));
  CHECK(t == 1'795'999'999'999'999'993);
  CHECK_FALSE(cuptiToUnixNs(0, 500, &t));                      // "could not collect"
  CHECK_FALSE(cuptiToUnixNs(uint64_t{1} << 63, 0, &t));         // beyond int64
  CHECK_FALSE(cuptiToUnixNs(INT64_MAX, 1, &t));                  // overflows
  CHECK_FALSE(cuptiToUnixNs(100, -100, &t));                     // not after the epoch
  CHECK(cuptiToUnixNs(INT64_MAX, 0, &t));
  CHECK(t == INT64_MAX);
}

TEST_CASE("offsetFromSamples: the tightest bracket decides; a previous offset inside it is kept") {
  // CUPTI's clock runs 1,000,000 ns behind CLOCK_REALTIME.
  std::vector<ClockSample> s = {
      {10'000'000, 9'000'100, 10'000'900},  // 900 ns bracket
      {20'000'000, 19'000'050, 20'000'100},  // 100 ns: the tightest, midpoint 20'000'050
      {30'000'000, 29'000'500, 30'002'000},
  };
  CHECK(offsetFromSamples(s, std::nullopt) == 1'000'000);
  CHECK(offsetFromSamples(s, 999'980) == 999'980);      // 19'000'050 + 999'980 = 20'000'030: inside
  CHECK(offsetFromSamples(s, 1'000'060) == 1'000'000);  // 20'000'110: outside, replaced
  CHECK(offsetFromSamples(s, 5) == 1'000'000);
  // Unusable samples are skipped; none usable: nullopt.
  std::vector<ClockSample> bad = {{100, 50, 90}, {100, 0, 200}, {100, uint64_t{1} << 63, 200}};
  CHECK_FALSE(offsetFromSamples(bad, std::nullopt).has_value());
  bad.push_back({1'000, 400, 1'010});
  CHECK(offsetFromSamples(bad, std::nullopt) == 605);
  CHECK_FALSE(offsetFromSamples({}, 3).has_value());
}

TEST_CASE("calibrate against the real cuptiGetTimestamp") {
  const CuptiApi& api = argus::capture::cupti::testing::realCupti();
  REQUIRE(api.loaded());
  ClockSync clock;
  CHECK_FALSE(clock.calibrated());
  CHECK(clock.offset() == 0);
  REQUIRE(clock.calibrate(api.getTimestamp));
  CHECK(clock.calibrated());
  // CUPTI's default clock on Linux is CLOCK_REALTIME: the offset is within the bracket.
  CHECK(clock.uncertainty() >= 0);
  CHECK(std::abs(clock.offset()) <= clock.uncertainty() + 1'000);
  uint64_t now = 0;
  REQUIRE(api.getTimestamp(&now) == CUPTI_SUCCESS);
  int64_t unix_ns = 0;
  REQUIRE(cuptiToUnixNs(now, clock.offset(), &unix_ns));
  CHECK(std::abs(unix_ns - realtimeNs()) < 10'000'000);  // same clock, within 10 ms of scheduling noise
  // A stable pair keeps its offset across calibrations (no jitter from call overhead).
  int64_t first = clock.offset();
  int kept = 0;
  for (int i = 0; i < 20; ++i) {
    REQUIRE(clock.calibrate(api.getTimestamp));
    kept += clock.offset() == first;
  }
  CHECK(kept >= 15);
  CHECK_FALSE(clock.calibrate(nullptr));
  CHECK_FALSE(clock.calibrate(api.getTimestamp, nullptr));
}

namespace {
// An epoch clock 5 s ahead of CLOCK_REALTIME (as if the shim's CPU sources had fixed their
// epoch before an NTP step): GPU times must land on that clock, not on CLOCK_REALTIME.
int64_t aheadNs() { return realtimeNs() + 5'000'000'000; }
}  // namespace

TEST_CASE("calibrate maps CUPTI onto the given epoch clock") {
  const CuptiApi& api = argus::capture::cupti::testing::realCupti();
  REQUIRE(api.loaded());
  ClockSync clock;
  REQUIRE(clock.calibrate(api.getTimestamp, aheadNs));
  CHECK(std::abs(clock.offset() - 5'000'000'000) <= clock.uncertainty() + 1'000);
  // Back to the real clock: the old offset is outside every bracket and is replaced.
  REQUIRE(clock.calibrate(api.getTimestamp));
  CHECK(std::abs(clock.offset()) <= clock.uncertainty() + 1'000);
}

namespace {
// A TSC-like tick clock, as Kineto's timestamp callback: 2.5 ticks per ns of CLOCK_REALTIME,
// counting from an arbitrary origin.
uint64_t CUPTIAPI fakeTsc() { return static_cast<uint64_t>(realtimeNs() - 1'700'000'000'000'000'000) * 5 / 2 + 1'000'000; }
uint64_t CUPTIAPI brokenTicks() { return 7; }  // stands still: no rate
}  // namespace

TEST_CASE("calibrateTicks: a tick clock's rate and anchor map its readings onto Unix ns") {
  ClockSync clock;
  REQUIRE(clock.calibrateTicks(fakeTsc));
  ClockMap m = clock.map();
  REQUIRE(m.scaled);
  CHECK(m.ns_per_tick == doctest::Approx(0.4).epsilon(0.01));
  int64_t unix_ns = 0;
  REQUIRE(m.toUnix(fakeTsc(), &unix_ns));
  CHECK(std::abs(unix_ns - realtimeNs()) < 1'000'000);
  // A later calibration fits the rate over the longer baseline.
  const int64_t until = realtimeNs() + 20'000'000;
  while (realtimeNs() < until) {
  }
  REQUIRE(clock.calibrateTicks(fakeTsc));
  m = clock.map();
  CHECK(m.ns_per_tick == doctest::Approx(0.4).epsilon(0.001));
  // 1,000 ticks from a reading are 400 ns later.
  const uint64_t t = fakeTsc();
  int64_t a = 0, b = 0;
  REQUIRE(m.toUnix(t, &a));
  REQUIRE(m.toUnix(t + 1'000, &b));
  CHECK(b - a == doctest::Approx(400).epsilon(0.01));
  CHECK(std::abs(a - realtimeNs()) < 1'000'000);
  CHECK_FALSE(m.toUnix(0, &a));  // "could not collect"

  ClockSync broken;
  CHECK_FALSE(broken.calibrateTicks(brokenTicks));
  CHECK_FALSE(broken.calibrated());
  CHECK_FALSE(broken.calibrateTicks(nullptr));
}
