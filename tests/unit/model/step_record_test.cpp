// Derived figures of a StepRecord's entries: size classes and effective bandwidth.
#include <doctest/doctest.h>

#include "model/step_record.h"

using namespace argus::model;

TEST_CASE("sizeClassOf is floor(log2(bytes)) + 1, 0 for no bytes") {
  CHECK(sizeClassOf(0) == 0);
  CHECK(sizeClassOf(1) == 1);
  CHECK(sizeClassOf(1023) == 10);
  CHECK(sizeClassOf(1024) == 11);
  CHECK(sizeClassOf(UINT64_MAX) == 64);
}

TEST_CASE("effectiveBandwidth: bytes over time, 0 when either is unknown") {
  CollectiveStat c;
  c.bytes = 64ull << 20;     // 64 MiB in all
  c.total_ns = 2'000'000;    // over 2 ms
  CHECK(effectiveBandwidth(c) == doctest::Approx(67108864.0 / 0.002));
  c.bytes = 0;
  CHECK(effectiveBandwidth(c) == 0.0);
  c.bytes = 1;
  c.total_ns = 0;
  CHECK(effectiveBandwidth(c) == 0.0);
  c.total_ns = -5;
  CHECK(effectiveBandwidth(c) == 0.0);
}
