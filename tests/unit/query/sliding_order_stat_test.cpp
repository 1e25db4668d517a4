// SlidingOrderStat against a sort of each frame: random frames sliding over random values
// (few distinct ones, so ties are common), bursts of inserts, BIGINT and DOUBLE.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>

#include "query/execution/sliding_order_stat.h"

using namespace argus::query;

namespace {

double naiveQuantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  if (lo + 1 >= v.size()) return v[lo];
  return v[lo] + (v[lo + 1] - v[lo]) * (pos - static_cast<double>(lo));
}

double naiveMad(const std::vector<double>& v) {
  double m = naiveQuantile(v, 0.5);
  std::vector<double> dev;
  for (double x : v) dev.push_back(std::fabs(x - m));
  return naiveQuantile(dev, 0.5);
}

template <typename T>
void checkSliding(uint32_t seed, int distinct) {
  std::mt19937 rng(seed);
  std::vector<T> values(500);
  for (T& v : values) v = static_cast<T>(static_cast<int>(rng() % distinct) - distinct / 3);
  SlidingOrderStat<T> stat;
  size_t s = 0, e = 0;
  while (e < values.size()) {
    // Grow by a burst or one row, then shrink by up to as much.
    size_t grow = rng() % 4 == 0 ? 1 + rng() % 30 : 1;
    size_t ne = std::min(values.size(), e + grow);
    while (e < ne) stat.insert(values[e++]);
    size_t ns = std::min(e, s + rng() % (grow + 2));
    while (s < ns) stat.erase(values[s++]);
    std::vector<double> frame(values.begin() + static_cast<std::ptrdiff_t>(s), values.begin() + static_cast<std::ptrdiff_t>(e));
    REQUIRE(stat.size() == frame.size());
    if (frame.empty()) continue;
    std::vector<double> sorted = frame;
    std::sort(sorted.begin(), sorted.end());
    CHECK(static_cast<double>(stat.at(0)) == sorted.front());
    CHECK(static_cast<double>(stat.at(frame.size() - 1)) == sorted.back());
    for (double q : {0.0, 0.25, 0.5, 0.9, 1.0}) {
      CHECK(stat.quantileCont(q) == doctest::Approx(naiveQuantile(frame, q)));
      size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(frame.size())));
      CHECK(static_cast<double>(stat.quantileDisc(q)) == sorted[k == 0 ? 0 : k - 1]);
    }
    CHECK(stat.mad() == doctest::Approx(naiveMad(frame)));
  }
}

}  // namespace

TEST_CASE("SlidingOrderStat: order statistics of sliding frames equal those of a sort") {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    checkSliding<int64_t>(seed, seed % 2 ? 5 : 1000);
    checkSliding<double>(seed, seed % 2 ? 3 : 100000);
  }
}

TEST_CASE("SlidingOrderStat: mad of one value and of two") {
  SlidingOrderStat<int64_t> s;
  s.insert(7);
  CHECK(s.mad() == 0);
  s.insert(10);
  CHECK(s.mad() == 1.5);  // median 8.5, deviations 1.5 and 1.5
  s.erase(7);
  CHECK(s.quantileCont(0.5) == 10);
}

TEST_CASE("SlidingOrderStat: fixed-width frames sliding by one row, in vector lanes (<= 64) and searched (> 64), with ties, extremes and NaN") {
  for (size_t width : {1, 2, 3, 4, 5, 7, 8, 21, 63, 64, 65, 100}) {
    std::mt19937 rng(static_cast<uint32_t>(width));
    std::vector<int64_t> ints(600);
    std::vector<double> doubles(600);
    for (size_t i = 0; i < ints.size(); ++i) {
      ints[i] = static_cast<int64_t>(rng() % 40) - 20;
      doubles[i] = rng() % 50 == 0 ? NAN : static_cast<double>(rng() % 40);
      if (rng() % 30 == 0) {  // the extremes, which no sentinel may stand in for
        ints[i] = rng() % 2 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
        doubles[i] = rng() % 2 ? -INFINITY : INFINITY;
      }
    }
    SlidingOrderStat<int64_t> si;
    SlidingOrderStat<double> sd;
    for (size_t e = 0; e < ints.size(); ++e) {
      si.insert(ints[e]);
      sd.insert(doubles[e]);
      if (e >= width) {
        si.erase(ints[e - width]);
        sd.erase(doubles[e - width]);
      }
      const size_t s = e >= width ? e - width + 1 : 0;
      std::vector<int64_t> fi(ints.begin() + static_cast<std::ptrdiff_t>(s), ints.begin() + static_cast<std::ptrdiff_t>(e) + 1);
      std::vector<double> fd(doubles.begin() + static_cast<std::ptrdiff_t>(s), doubles.begin() + static_cast<std::ptrdiff_t>(e) + 1);
      std::sort(fi.begin(), fi.end());
      // NaN sorts above every number.
      std::sort(fd.begin(), fd.end(), [](double a, double b) { return !std::isnan(a) && (std::isnan(b) || a < b); });
      REQUIRE(si.size() == fi.size());
      REQUIRE(sd.size() == fd.size());
      for (size_t k = 0; k < fi.size(); ++k) {
        INFO("width " << width << " row " << e << " rank " << k);
        REQUIRE(si.at(k) == fi[k]);
        const double got = sd.at(k);
        REQUIRE(((std::isnan(got) && std::isnan(fd[k])) || got == fd[k]));
      }
    }
  }
}

TEST_CASE("SlidingOrderStat: slideCont's rolling rows equal a slide and quantileCont per row, in registers (<= 24), row by row in lanes and searched") {
  for (size_t width : {1, 2, 3, 4, 5, 8, 21, 24, 25, 40, 64, 65, 100}) {
    for (double q : {0.0, 0.5, 0.9, 1.0}) {
      std::mt19937 rng(static_cast<uint32_t>(width * 10 + static_cast<size_t>(q * 10)));
      std::vector<int64_t> ints(700);
      std::vector<double> doubles(700);
      for (size_t i = 0; i < ints.size(); ++i) {
        ints[i] = static_cast<int64_t>(rng() % 40) - 20;
        doubles[i] = rng() % 50 == 0 ? NAN : static_cast<double>(rng() % 40) / 4;
        if (rng() % 30 == 0) {
          ints[i] = rng() % 2 ? std::numeric_limits<int64_t>::min() / 2 : std::numeric_limits<int64_t>::max() / 2;
          doubles[i] = rng() % 2 ? -INFINITY : INFINITY;
        }
      }
      SlidingOrderStat<int64_t> rolled_i, per_row_i;
      SlidingOrderStat<double> rolled_d, per_row_d;
      for (size_t e = 0; e < width; ++e) {
        rolled_i.insert(ints[e]);
        per_row_i.insert(ints[e]);
        rolled_d.insert(doubles[e]);
        per_row_d.insert(doubles[e]);
      }
      for (size_t e = width; e < ints.size();) {
        const size_t m = std::min(ints.size() - e, static_cast<size_t>(1 + rng() % 50));
        std::vector<double> got_i(m), got_d(m);
        rolled_i.slideCont(ints.data() + e, ints.data() + e - width, m, q, got_i.data());
        rolled_d.slideCont(doubles.data() + e, doubles.data() + e - width, m, q, got_d.data());
        for (size_t r = 0; r < m; ++r, ++e) {
          per_row_i.insert(ints[e]);
          per_row_i.erase(ints[e - width]);
          per_row_d.insert(doubles[e]);
          per_row_d.erase(doubles[e - width]);
          INFO("width " << width << " q " << q << " row " << e);
          REQUIRE(got_i[r] == per_row_i.quantileCont(q));
          const double want = per_row_d.quantileCont(q);
          REQUIRE(((std::isnan(got_d[r]) && std::isnan(want)) || got_d[r] == want));
        }
      }
    }
  }
}
