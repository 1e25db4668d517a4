#include "model/duration_histogram.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using argus::ByteReader;
using argus::ByteWriter;
using argus::model::DurationHistogram;

namespace {

constexpr double kTol = DurationHistogram::kRelativeError * (1 + 1e-9);

// Exact rank-based quantile of sorted values, matching DDSketch's rank definition.
int64_t exactQuantile(const std::vector<int64_t>& sorted, double q) {
  size_t rank = static_cast<size_t>(std::floor(q * static_cast<double>(sorted.size() - 1)));
  return sorted[rank];
}

std::vector<int64_t> logUniform(std::mt19937_64& rng, size_t n, double lo, double hi) {
  std::uniform_real_distribution<double> u(std::log(lo), std::log(hi));
  std::vector<int64_t> v(n);
  for (auto& x : v) x = std::max<int64_t>(1, static_cast<int64_t>(std::exp(u(rng))));
  return v;
}

std::string serialized(const DurationHistogram& h) {
  std::string out;
  ByteWriter w(&out);
  h.serialize(w);
  return out;
}

}  // namespace

TEST_CASE("bucket layout: 1 ns in bucket 1, non-positive in 0, INT64_MAX in kMaxIndex") {
  CHECK(DurationHistogram::bucketOf(0) == 0);
  CHECK(DurationHistogram::bucketOf(-5) == 0);
  CHECK(DurationHistogram::bucketOf(std::numeric_limits<int64_t>::min()) == 0);
  CHECK(DurationHistogram::bucketOf(1) == 1);
  CHECK(DurationHistogram::bucketOf(std::numeric_limits<int64_t>::max()) == DurationHistogram::kMaxIndex);
  CHECK(DurationHistogram::valueOf(0) == 0.0);
  int32_t prev = 0;
  for (int64_t d = 1; d < 100000; d += 1 + d / 50) {
    int32_t b = DurationHistogram::bucketOf(d);
    CHECK(b >= prev);
    prev = b;
    double v = DurationHistogram::valueOf(b);
    CHECK(std::abs(v - static_cast<double>(d)) <= kTol * static_cast<double>(d));
  }
}

namespace {

// Unbounded unsigned integer, little-endian 32-bit limbs: just enough to test the bucket
// bounds with exact arithmetic.
struct BigUint {
  std::vector<uint32_t> limbs{1};
  void mul(uint64_t m) {  // m < 2^32
    uint64_t carry = 0;
    for (auto& l : limbs) {
      uint64_t t = static_cast<uint64_t>(l) * m + carry;
      l = static_cast<uint32_t>(t);
      carry = t >> 32;
    }
    if (carry) limbs.push_back(static_cast<uint32_t>(carry));
  }
  // Returns this * m (m any 64-bit value).
  BigUint times(uint64_t m) const {
    BigUint lo = *this, hi = *this;
    lo.mul(m & 0xffffffffu);
    hi.mul(m >> 32);
    hi.limbs.insert(hi.limbs.begin(), 0);  // * 2^32
    BigUint sum;
    sum.limbs.assign(std::max(lo.limbs.size(), hi.limbs.size()) + 1, 0);
    uint64_t carry = 0;
    for (size_t i = 0; i < sum.limbs.size(); ++i) {
      uint64_t t = carry + (i < lo.limbs.size() ? lo.limbs[i] : 0) + (i < hi.limbs.size() ? hi.limbs[i] : 0);
      sum.limbs[i] = static_cast<uint32_t>(t);
      carry = t >> 32;
    }
    return sum;
  }
  // Three-way comparison.
  static int cmp(const BigUint& a, const BigUint& b) {
    size_t n = std::max(a.limbs.size(), b.limbs.size());
    for (size_t i = n; i-- > 0;) {
      uint32_t x = i < a.limbs.size() ? a.limbs[i] : 0, y = i < b.limbs.size() ? b.limbs[i] : 0;
      if (x != y) return x < y ? -1 : 1;
    }
    return 0;
  }
};

// The old definition, floor(log_gamma(d)) + 1 through libm; agrees with the exact table
// except within a rounding error of a bound.
int32_t bucketByLog(int64_t d) {
  const double log_gamma = std::log(1.01 / 0.99);
  double idx = std::floor(std::log(static_cast<double>(d)) / log_gamma) + 1.0;
  return static_cast<int32_t>(std::clamp(idx, 1.0, static_cast<double>(DurationHistogram::kMaxIndex)));
}

}  // namespace

TEST_CASE("bucket bounds are exactly ceil((101/99)^i)") {
  // gamma^i = P / Q with P = 101^i, Q = 99^i; b = ceil(P / Q) iff b*Q >= P > (b-1)*Q.
  BigUint p, q;
  for (int32_t i = 0; i <= DurationHistogram::kMaxIndex; ++i) {
    uint64_t b = DurationHistogram::upperBound(i == 0 ? 0 : i);
    if (i == 0) b = DurationHistogram::lowerBound(1);
    REQUIRE_MESSAGE(BigUint::cmp(q.times(b), p) >= 0, "bound " << i);
    REQUIRE_MESSAGE(BigUint::cmp(q.times(b - 1), p) < 0, "bound " << i);
    if (i > 0) CHECK(DurationHistogram::lowerBound(i) == DurationHistogram::upperBound(i - 1));
    p.mul(101);
    q.mul(99);
  }
  CHECK(DurationHistogram::upperBound(DurationHistogram::kMaxIndex) > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
  CHECK(DurationHistogram::upperBound(DurationHistogram::kMaxIndex - 1) <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
}

TEST_CASE("bucketOf agrees with the bounds at every bound, bound - 1 and bound + 1") {
  constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
  int mismatches_with_log = 0;
  int64_t first_log_mismatch = 0;
  for (int32_t i = 1; i <= DurationHistogram::kMaxIndex; ++i) {
    uint64_t lo = DurationHistogram::lowerBound(i), hi = DurationHistogram::upperBound(i);
    if (lo == hi) continue;  // no integer in this bucket
    for (uint64_t d : {lo, lo + 1, hi - 1, hi - 2, lo + (hi - lo) / 2}) {
      if (d < lo || d >= hi || d > static_cast<uint64_t>(kI64Max)) continue;
      REQUIRE_MESSAGE(DurationHistogram::bucketOf(static_cast<int64_t>(d)) == i, "d=" << d);
    }
    if (lo > 1) REQUIRE(DurationHistogram::bucketOf(static_cast<int64_t>(lo - 1)) < i);
    if (hi <= static_cast<uint64_t>(kI64Max)) REQUIRE(DurationHistogram::bucketOf(static_cast<int64_t>(hi)) > i);
    // valueOf is within the relative error of every member: it is enough to check the ends.
    double v = DurationHistogram::valueOf(i);
    for (uint64_t d : {lo, std::min(hi - 1, static_cast<uint64_t>(kI64Max))}) {
      double x = static_cast<double>(d);
      CHECK_MESSAGE(std::abs(v - x) <= kTol * x, "bucket " << i << " d=" << d << " value=" << v);
    }
    for (uint64_t d : {lo - 1, lo}) {
      if (d == 0 || d > static_cast<uint64_t>(kI64Max)) continue;
      if (bucketByLog(static_cast<int64_t>(d)) != DurationHistogram::bucketOf(static_cast<int64_t>(d))) {
        if (mismatches_with_log++ == 0) first_log_mismatch = static_cast<int64_t>(d);
      }
    }
  }
  // Every integer from 1 to 100,000 against a walk over the bounds.
  int32_t b = 1;
  for (int64_t d = 1; d <= 100000; ++d) {
    while (static_cast<uint64_t>(d) >= DurationHistogram::upperBound(b)) ++b;
    REQUIRE(DurationHistogram::bucketOf(d) == b);
  }
  // The libm formula it replaces disagreed only near bounds above ~33 s on glibc.
  MESSAGE("libm log formula disagrees at " << mismatches_with_log << " bound-adjacent durations, the first at " << first_log_mismatch << " ns");
}

TEST_CASE("bucketOf is monotonic and matches a binary search over random durations") {
  std::mt19937_64 rng(2024);
  for (int round = 0; round < 200000; ++round) {
    int64_t d = static_cast<int64_t>(rng() >> (1 + rng() % 63));
    if (d <= 0) continue;
    int32_t lo = 1, hi = DurationHistogram::kMaxIndex;
    while (lo < hi) {
      int32_t mid = (lo + hi) / 2;
      if (static_cast<uint64_t>(d) < DurationHistogram::upperBound(mid)) hi = mid; else lo = mid + 1;
    }
    REQUIRE(DurationHistogram::bucketOf(d) == lo);
    REQUIRE(DurationHistogram::bucketOf(d - 1) <= lo);
  }
}

TEST_CASE("quantiles stay within the relative error over log-uniform values 1ns..1e12ns") {
  std::mt19937_64 rng(42);
  for (size_t n : {size_t{1}, size_t{2}, size_t{17}, size_t{1000}, size_t{65536}}) {
    for (int round = 0; round < 3; ++round) {
      auto values = logUniform(rng, n, 1.0, 1e12);
      DurationHistogram h;
      for (int64_t v : values) h.add(v);
      CHECK(h.count() == n);
      std::sort(values.begin(), values.end());
      for (double q : {0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0}) {
        double expect = static_cast<double>(exactQuantile(values, q));
        double got = h.quantile(q);
        CHECK_MESSAGE(std::abs(got - expect) <= kTol * expect, "n=" << n << " q=" << q << " got=" << got << " expect=" << expect);
      }
      double exact_total = 0;
      for (int64_t v : values) exact_total += static_cast<double>(v);
      CHECK(std::abs(h.approxTotal() - exact_total) <= kTol * exact_total);
    }
  }
}

TEST_CASE("one value and empty histogram") {
  DurationHistogram h;
  CHECK(h.empty());
  CHECK(h.count() == 0);
  CHECK(h.quantile(0.5) == 0.0);
  CHECK(h.approxTotal() == 0.0);
  h.add(12345);
  CHECK(h.count() == 1);
  CHECK(std::abs(h.quantile(0.0) - 12345) <= kTol * 12345);
  CHECK(h.quantile(0.0) == h.quantile(1.0));
  CHECK(h.quantile(std::nan("")) == h.quantile(0.0));
  h.add(12345, 0);  // adding zero occurrences changes nothing
  CHECK(h.count() == 1);
}

TEST_CASE("merge equals the histogram of the union") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 50; ++round) {
    auto a = logUniform(rng, rng() % 300, 1.0, 1e9);
    auto b = logUniform(rng, rng() % 300, 1e3, 1e12);
    DurationHistogram ha, hb, hu;
    for (int64_t v : a) { ha.add(v); hu.add(v); }
    for (int64_t v : b) { hb.add(v); hu.add(v); }
    DurationHistogram m = ha;
    m.merge(hb);
    CHECK(m == hu);
    DurationHistogram m2 = hb;
    m2.merge(ha);
    CHECK(m2 == hu);
  }
}

TEST_CASE("merging sketches whose buckets are (mostly) already there") {
  // merge adds in place while the other's buckets exist, then merges the rest: cover a
  // subset, a subset then a new bucket, and new buckets below, between and above.
  std::mt19937_64 rng(11);
  for (int round = 0; round < 200; ++round) {
    auto a = logUniform(rng, 1 + rng() % 300, 1e3, 1e6);
    std::vector<int64_t> b;
    for (int64_t v : a) {
      if (rng() % 3 == 0) b.push_back(v);
    }
    if (round % 2 == 1) b.push_back(static_cast<int64_t>(1 + rng() % 10'000'000));  // maybe a new bucket anywhere
    DurationHistogram ha, hb, hu;
    for (int64_t v : a) { ha.add(v); hu.add(v); }
    for (int64_t v : b) { hb.add(v); hu.add(v); }
    ha.merge(hb);
    CHECK(ha == hu);
  }
}

TEST_CASE("bucket counts saturate instead of wrapping") {
  DurationHistogram h;
  h.add(100, std::numeric_limits<uint32_t>::max());
  h.add(100, 5);
  CHECK(h.buckets().size() == 1);
  CHECK(h.buckets()[0].count == std::numeric_limits<uint32_t>::max());
  DurationHistogram g = h;
  g.merge(h);
  CHECK(g.buckets()[0].count == std::numeric_limits<uint32_t>::max());
}

TEST_CASE("assign validates order, range and counts") {
  DurationHistogram h;
  CHECK(h.assign({{1, 2}, {5, 1}}).isOk());
  CHECK(h.count() == 3);
  CHECK(h.assign({{5, 1}, {5, 1}}).isCorruption());
  CHECK(h.assign({{6, 1}, {5, 1}}).isCorruption());
  CHECK(h.assign({{1, 0}}).isCorruption());
  CHECK(h.assign({{-1, 1}}).isCorruption());
  CHECK(h.assign({{DurationHistogram::kMaxIndex + 1, 1}}).isCorruption());
  CHECK(h.count() == 3);  // a failed assign leaves the histogram unchanged
}

TEST_CASE("serialize round-trip") {
  std::mt19937_64 rng(99);
  for (int round = 0; round < 200; ++round) {
    DurationHistogram h;
    size_t n = round == 0 ? 0 : rng() % 2000;
    for (int64_t v : logUniform(rng, n, 1.0, 1e12)) h.add(v, 1 + static_cast<uint32_t>(rng() % 3));
    if (round % 7 == 0) h.add(0);
    if (round % 11 == 0) h.add(std::numeric_limits<int64_t>::max(), std::numeric_limits<uint32_t>::max());
    std::string bytes = serialized(h);
    ByteReader r(bytes, "hist");
    DurationHistogram back;
    REQUIRE(back.deserialize(r).isOk());
    CHECK(r.atEnd());
    CHECK(back == h);
  }
}

TEST_CASE("hostile bytes yield Corruption, never a crash") {
  // Hand-made hostile encodings.
  auto decode = [](std::string bytes) {
    ByteReader r(bytes, "hist");
    DurationHistogram h;
    return h.deserialize(r);
  };
  CHECK(decode("").isCorruption());
  CHECK(decode(std::string("\xff\xff\xff\xff\x0f", 5)).isCorruption());            // huge bucket count
  CHECK(decode(std::string("\x02\x02\x01\x00\x01", 5)).isCorruption());            // zero delta: repeated index
  CHECK(decode(std::string("\x02\x04\x01\x01\x01", 5)).isCorruption());            // negative delta
  CHECK(decode(std::string("\x01\x02\x00", 3)).isCorruption());                    // zero count
  CHECK(decode(std::string("\x01\x02\xff\xff\xff\xff\x1f", 7)).isCorruption());    // count > 2^32
  CHECK(decode(std::string("\x01\x01\x01", 3)).isCorruption());                    // first index -1
  CHECK(decode(std::string("\x01\xa0\x40\x01", 4)).isCorruption());                // index beyond kMaxIndex

  // Random bytes, truncations and bit flips of valid encodings.
  std::mt19937_64 rng(1234);
  DurationHistogram sample;
  for (int64_t v : logUniform(rng, 500, 1.0, 1e10)) sample.add(v);
  std::string valid = serialized(sample);
  int ok = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string bytes;
    switch (round % 3) {
      case 0:
        bytes.resize(rng() % 64);
        for (auto& c : bytes) c = static_cast<char>(rng());
        break;
      case 1:
        bytes = valid.substr(0, rng() % valid.size());
        break;
      default:
        bytes = valid;
        bytes[rng() % bytes.size()] ^= static_cast<char>(1u << (rng() % 8));
        break;
    }
    ByteReader r(bytes, "hist");
    DurationHistogram h;
    argus::Status s = h.deserialize(r);
    if (s.isOk()) {
      ++ok;
      // Whatever decodes must be a valid histogram.
      DurationHistogram check;
      CHECK(check.assign(h.buckets()).isOk());
    } else {
      CHECK(s.isCorruption());
    }
  }
  CHECK(ok < 20000);
}

TEST_CASE("representative: an integer within the relative error of every member of its bucket, exact for one-integer buckets") {
  CHECK(DurationHistogram::representative(0) == 0);
  for (int32_t i = 1; i <= DurationHistogram::kMaxIndex; ++i) {
    uint64_t lo = DurationHistogram::lowerBound(i), hi = DurationHistogram::upperBound(i);
    if (lo >= hi || lo > static_cast<uint64_t>(INT64_MAX)) continue;  // no integer in the bucket
    uint64_t last = std::min<uint64_t>(hi - 1, static_cast<uint64_t>(INT64_MAX));
    __int128 rep = DurationHistogram::representative(i);
    if (lo == last) {
      CHECK(DurationHistogram::representative(i) == static_cast<int64_t>(lo));
      continue;
    }
    // Rounding to an integer adds at most half a unit to the sketch's own error.
    for (uint64_t member : {lo, last}) {
      __int128 m = member, diff = rep > m ? rep - m : m - rep;
      CHECK(diff * 100 <= m + 50);  // |rep - m| <= 1% of m + 0.5, exactly
    }
  }
}

TEST_CASE("sketchTotal: within the relative error of the exact sum, deterministic, and 0 when empty") {
  DurationHistogram h;
  CHECK(h.sketchTotal() == 0);
  uint64_t s = 12345;
  int64_t exact = 0;
  for (int i = 0; i < 5000; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    int64_t d = 100 + static_cast<int64_t>((s >> 33) % 50'000'000);
    h.add(d);
    exact += d;
  }
  int64_t sketch = h.sketchTotal();
  CHECK(std::abs(static_cast<double>(sketch - exact)) <= DurationHistogram::kRelativeError * static_cast<double>(exact));
  CHECK(DurationHistogram::sketchTotal(h.buckets()) == sketch);
  DurationHistogram one;
  one.add(5000, 3);  // bucket 426 holds 4,966 ... 5,067: the representative times 3
  CHECK(one.sketchTotal() == 3 * DurationHistogram::representative(DurationHistogram::bucketOf(5000)));
}
