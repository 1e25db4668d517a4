// selectNth against a sorted copy: every rank of small and large buffers, value ranges from
// one value to the whole of int64 (the slice arithmetic's extremes), many duplicates.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "query/function/select_nth.h"

using namespace argus::query;

namespace {

void checkAllRanks(const std::vector<int64_t>& values, size_t stride = 1) {
  std::vector<int64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (size_t k = 0; k < values.size(); k += stride) {
    std::vector<int64_t> v = values;
    NthPair p = selectNth(v, k);
    INFO("n=" << values.size() << " k=" << k);
    std::sort(v.begin(), v.end());
    REQUIRE(v == sorted);  // reordered, nothing lost (mad reads the values again)
    REQUIRE(p.nth == sorted[k]);
    REQUIRE(p.next == sorted[std::min(k + 1, sorted.size() - 1)]);
  }
}

}  // namespace

TEST_CASE("selectNth finds every rank and the one after it") {
  std::mt19937_64 rng(7);
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  for (size_t n : {1, 2, 3, 255, 256, 257, 1000, 5000}) {
    std::vector<int64_t> uniform(n), narrow(n), extremes(n), skewed(n);
    for (size_t i = 0; i < n; ++i) {
      uniform[i] = static_cast<int64_t>(rng());
      narrow[i] = static_cast<int64_t>(rng() % 5);
      extremes[i] = rng() % 2 ? kMin : kMax;
      skewed[i] = rng() % 100 == 0 ? kMax - static_cast<int64_t>(rng() % 3) : 1'000'000 + static_cast<int64_t>(rng() % 1000);
    }
    const size_t stride = n > 1000 ? 97 : 1;
    checkAllRanks(uniform, stride);
    checkAllRanks(narrow, stride);
    checkAllRanks(extremes, stride);
    checkAllRanks(skewed, stride);
    checkAllRanks(std::vector<int64_t>(n, -42), stride);
  }
}

TEST_CASE("selectNth on step times: one slow rank among 10,240") {
  std::mt19937_64 rng(11);
  std::vector<int64_t> v(10240);
  for (auto& x : v) x = 400'000'000 + static_cast<int64_t>(rng() % 2'000'000);
  v[1234] = 4'000'000'000;
  checkAllRanks(v, 509);
  std::vector<int64_t> last = v;
  CHECK(selectNth(last, v.size() - 1).nth == 4'000'000'000);
  CHECK(selectNth(last, v.size() - 1).next == 4'000'000'000);
}

TEST_CASE("selectNth on large buffers: sorted, reversed, periodic, duplicated, heavy-tailed") {
  std::mt19937_64 rng(13);
  for (size_t n : {4096, 4097, 10240, 40000}) {
    std::vector<int64_t> sorted(n), reversed(n), periodic(n), dups(n), tail(n);
    for (size_t i = 0; i < n; ++i) {
      sorted[i] = static_cast<int64_t>(i);
      reversed[i] = static_cast<int64_t>(n - i);
      periodic[i] = static_cast<int64_t>(i % (n / 512)) * 1000;  // the sample's stride
      dups[i] = static_cast<int64_t>(rng() % 3);
      tail[i] = rng() % 50 == 0 ? static_cast<int64_t>(rng() >> 2) : 500'000 + static_cast<int64_t>(rng() % 100);
    }
    for (const auto* v : {&sorted, &reversed, &periodic, &dups, &tail}) checkAllRanks(*v, n / 61);
    // The ranks next to the window's edges and the buffer's ends.
    for (size_t k : {size_t{0}, size_t{1}, n / 2 - 1, n / 2, n - 2, n - 1}) {
      std::vector<int64_t> v = tail;
      std::vector<int64_t> s = tail;
      std::sort(s.begin(), s.end());
      NthPair p = selectNth(v, k);
      CHECK(p.nth == s[k]);
      CHECK(p.next == s[std::min(k + 1, n - 1)]);
    }
  }
}

// The positions selectNth samples in a buffer of n >= 4096 values (select_nth.h).
std::vector<size_t> samplePositions(size_t n) {
  std::vector<size_t> at;
  const size_t stride = n / 512;
  for (size_t j = 0; j < 512; ++j) at.push_back(j * stride + static_cast<size_t>((j * 0x9E3779B97F4A7C15ull) >> 40) % stride);
  return at;
}

TEST_CASE("selectNth when the sample misjudges: every sampled position holds an outlier") {
  // Outliers at the picks put the sample's window far above the true median, so the answer
  // comes from the fallback over the whole buffer.
  const size_t n = 10240;
  std::vector<int64_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<int64_t>(i % 1000);
  for (size_t at : samplePositions(n)) v[at] = 1'000'000 + static_cast<int64_t>(at);
  checkAllRanks(v, 101);
}

TEST_CASE("selectNth when rank k is the window's last: the next value lies above the window") {
  // Zeros at every pick (and elsewhere, a fifth of the buffer in all), ones in the rest:
  // the sample's window is {0}, so the pair (the last 0, the first 1) spans its edge.
  const size_t n = 10240;
  std::vector<int64_t> v(n, 1);
  size_t zeros = 0;
  for (size_t at : samplePositions(n)) zeros += std::exchange(v[at], 0) == 1;
  for (size_t i = 0; zeros < n / 5; ++i) zeros += std::exchange(v[i], 0) == 1;
  const NthPair p = selectNth(v, n / 5 - 1);
  CHECK(p.nth == 0);
  CHECK(p.next == 1);
  checkAllRanks(v, 97);
}
