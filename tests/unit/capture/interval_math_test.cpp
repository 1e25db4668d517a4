// interval_math: intersection and difference lengths of merged lists against a count of
// the covered nanoseconds, for random lists of very different lengths (the assembler
// intersects a few communication intervals with thousands of compute blocks).
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "capture/interval_math.h"

using namespace argus::capture;

namespace {

// A merged list of about n intervals inside [0, span).
std::vector<Interval> randomMerged(std::mt19937& rng, int n, int64_t span) {
  std::vector<Interval> raw;
  std::uniform_int_distribution<int64_t> at(0, span - 1), len(0, span / (n + 1) + 3);
  for (int i = 0; i < n; ++i) {
    int64_t b = at(rng);
    raw.push_back({b, std::min(span, b + len(rng))});
  }
  std::vector<Interval> merged;
  unionOf(raw, &merged);
  return merged;
}

int64_t coveredByBoth(const std::vector<Interval>& a, const std::vector<Interval>& b, int64_t span) {
  std::vector<int> cover(static_cast<size_t>(span), 0);
  for (const Interval& x : a) {
    for (int64_t t = x.begin; t < x.end; ++t) cover[static_cast<size_t>(t)] |= 1;
  }
  for (const Interval& x : b) {
    for (int64_t t = x.begin; t < x.end; ++t) cover[static_cast<size_t>(t)] |= 2;
  }
  int64_t n = 0;
  for (int c : cover) n += c == 3;
  return n;
}

}  // namespace

TEST_CASE("intersection and difference lengths match a count of covered nanoseconds") {
  std::mt19937 rng(7);
  const int64_t span = 5000;
  for (int round = 0; round < 300; ++round) {
    const int na = std::uniform_int_distribution<int>(0, 6)(rng);
    const int nb = std::uniform_int_distribution<int>(0, round % 3 == 0 ? 400 : 12)(rng);
    const std::vector<Interval> a = randomMerged(rng, na, span), b = randomMerged(rng, nb, span);
    CAPTURE(round);
    const int64_t both = coveredByBoth(a, b, span);
    CHECK(intersectionLength(a, b) == both);
    CHECK(intersectionLength(b, a) == both);
    CHECK(differenceLength(a, b) == lengthOf(a) - both);
  }
  // Touching intervals share no time; nested ones share the inner.
  const std::vector<Interval> a{{0, 10}, {20, 30}}, b{{10, 20}, {30, 40}}, c{{2, 4}, {5, 25}, {29, 100}};
  CHECK(intersectionLength(a, b) == 0);
  CHECK(intersectionLength(a, c) == 2 + 5 + 5 + 1);
  CHECK(intersectionLength(std::vector<Interval>{}, c) == 0);
}
