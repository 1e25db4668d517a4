// The online change-point detector on series with a known answer: a step change, warm-up,
// periodic and isolated spikes, a slowdown that lasts, and noise alone.
#include "diagnose/change_detector.h"

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>

using namespace argus::diagnose;

namespace {

// 100 +- 0.3% noise; `slow` steps at 110.
std::vector<AnomalyWindow> detect(uint64_t steps, const std::function<double(uint64_t, double)>& shape, const std::function<bool(uint64_t)>& expected = {},
                                  DetectorOptions o = {}) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 0.3);
  ChangeDetector d(o);
  for (uint64_t s = 0; s < steps; ++s) d.add(s, shape(s, 100 + noise(rng)), expected && expected(s));
  return d.windows();
}

}  // namespace

TEST_CASE("a step change opens a window at its onset and closes it after its end") {
  auto w = detect(300, [](uint64_t s, double v) { return s >= 120 && s < 150 ? v * 1.1 : v; });
  REQUIRE(w.size() == 1);
  CHECK(w[0].from_step == 120);
  CHECK(w[0].to_step == 149);
  CHECK(w[0].anomalous_steps == 30);
  CHECK(w[0].slowdown == doctest::Approx(0.1).epsilon(0.02));
  CHECK_FALSE(w[0].open);
  CHECK(w[0].confidence() > 0.9);
}

TEST_CASE("noise, warm-up and marked checkpoint spikes open no window") {
  CHECK(detect(2000, [](uint64_t, double v) { return v; }).empty());
  auto warm = [](uint64_t s, double v) { return v * (1 + std::exp(-static_cast<double>(s) / 3)); };
  CHECK(detect(500, warm).empty());
  auto checkpoint = [](uint64_t s) { return s > 0 && s % 100 == 0; };
  CHECK(detect(1000, [&](uint64_t s, double v) { return checkpoint(s) ? v * 8 : v; }, checkpoint).empty());
  // Unmarked, a checkpoint is a one-step spike: too short for a window.
  CHECK(detect(1000, [&](uint64_t s, double v) { return checkpoint(s) ? v * 8 : v; }).empty());
}

TEST_CASE("a slowdown that lasts stays anomalous: the baseline is frozen while a window is open") {
  auto w = detect(600, [](uint64_t s, double v) { return s >= 200 ? v * 1.05 : v; });
  REQUIRE(w.size() == 1);
  CHECK(w[0].from_step == 200);
  CHECK(w[0].to_step == 599);
  CHECK(w[0].open);
}

TEST_CASE("small changes below the minimum slowdown, and steps faster than usual, are not windows") {
  CHECK(detect(400, [](uint64_t s, double v) { return s >= 200 ? v * 1.02 : v; }).empty());
  CHECK(detect(400, [](uint64_t s, double v) { return s >= 200 ? v * 0.8 : v; }).empty());
}

TEST_CASE("two faults are two windows; a decision uses only the steps before it") {
  auto shape = [](uint64_t s, double v) { return (s >= 100 && s < 110) || (s >= 200 && s < 203) ? v * 1.2 : v; };
  auto w = detect(400, shape);
  REQUIRE(w.size() == 2);
  CHECK(w[0].from_step == 100);
  CHECK(w[1].from_step == 200);
  CHECK(w[1].to_step == 202);
  // Online: fed only up to step 201, the second window is already open.
  auto partial = detect(202, shape);
  REQUIRE(partial.size() == 2);
  CHECK(partial[1].open);
  CHECK(partial[1].from_step == 200);
}
