// selectNth against a sorted copy: every rank of small and large buffers, value ranges from
// one value to the whole of int64 (the slice arithmetic's extremes), many duplicates.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <random>
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
