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
