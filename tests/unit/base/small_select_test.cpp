#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "base/small_select.h"

namespace {

// Every k of `values`: a[k] is the sorted k-th, nothing before it larger, nothing after it
// smaller, and the values are a permutation of the input.
template <typename T>
void checkEveryRank(const std::vector<T>& values) {
  std::vector<T> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (size_t k = 0; k < values.size(); ++k) {
    std::vector<T> a = values;
    argus::selectSmall(a.data(), a.size(), k);
    REQUIRE(a[k] == sorted[k]);
    for (size_t i = 0; i < k; ++i) REQUIRE(!(a[k] < a[i]));
    for (size_t i = k + 1; i < a.size(); ++i) REQUIRE(!(a[i] < a[k]));
    std::sort(a.begin(), a.end());
    REQUIRE(a == sorted);
  }
}

}  // namespace

TEST_CASE("selectSmall places every rank of noisy, ordered and repetitive values") {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> timing(1e7, 2e5);
  for (size_t n : {1, 2, 3, 16, 17, 18, 33, 64, 97, 128, 255, 300}) {
    CAPTURE(n);
    std::vector<int64_t> noisy(n), sorted(n), reversed(n), equal(n, 42), few(n), pipe(n);
    for (size_t i = 0; i < n; ++i) {
      noisy[i] = static_cast<int64_t>(timing(rng));
      sorted[i] = static_cast<int64_t>(i);
      reversed[i] = static_cast<int64_t>(n - i);
      few[i] = static_cast<int64_t>(rng() % 3);
      pipe[i] = static_cast<int64_t>(std::min(i, n - i));  // organ pipe
    }
    for (const auto* v : {&noisy, &sorted, &reversed, &equal, &few, &pipe}) checkEveryRank(*v);
    std::vector<double> doubles(n);
    for (double& d : doubles) d = timing(rng);
    checkEveryRank(doubles);
  }
}

TEST_CASE("selectSmall places ranks of a large buffer of repeats and ascending runs") {
  std::vector<int64_t> v;
  for (int i = 0; i < 5000; ++i) v.push_back((i / 7) % 2 == 0 ? 1 : static_cast<int64_t>(i));
  std::vector<int64_t> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (size_t k : {size_t{0}, size_t{1}, v.size() / 3, v.size() / 2, v.size() - 1}) {
    std::vector<int64_t> a = v;
    argus::selectSmall(a.data(), a.size(), k);
    CHECK(a[k] == sorted[k]);
    CHECK(*std::max_element(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(k) + 1) == a[k]);
  }
}
