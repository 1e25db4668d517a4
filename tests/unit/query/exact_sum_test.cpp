// exactSum against an __int128 running sum: the extremes of int64 (where the bias and the
// halves' carries meet), lengths around the vector widths, and random values.
#include <doctest/doctest.h>

#include <limits>
#include <random>
#include <vector>

#include "query/function/exact_sum.h"

using namespace argus::query;

namespace {

__int128 reference(const std::vector<int64_t>& x, size_t first, size_t n) {
  __int128 sum = 0;
  for (size_t i = first; i < first + n; ++i) sum += x[i];
  return sum;
}

}  // namespace

TEST_CASE("exactSum equals a 128-bit running sum") {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  std::mt19937_64 rng(5);
  std::vector<int64_t> values(4096);
  for (int pattern = 0; pattern < 5; ++pattern) {
    for (auto& v : values) {
      switch (pattern) {
        case 0: v = static_cast<int64_t>(rng()); break;
        case 1: v = kMax; break;
        case 2: v = kMin; break;
        case 3: v = rng() % 2 ? kMin : kMax; break;
        default: v = -1 - static_cast<int64_t>(rng() % 3); break;  // low halves all ones
      }
    }
    for (size_t n : {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 61, 256, 4095}) {
      for (size_t first : {size_t{0}, size_t{1}}) {
        INFO("pattern " << pattern << " n " << n << " first " << first);
        CHECK(exactSum(values.data() + first, n) == reference(values, first, n));
      }
    }
  }
  // A sum far past int64 either way.
  std::vector<int64_t> big(100000, kMax);
  CHECK(exactSum(big.data(), big.size()) == static_cast<__int128>(kMax) * 100000);
  std::vector<int64_t> small(100000, kMin);
  CHECK(exactSum(small.data(), small.size()) == static_cast<__int128>(kMin) * 100000);
}
