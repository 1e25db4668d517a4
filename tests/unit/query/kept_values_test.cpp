// KeptValues: each group gets back exactly its values, in order, across segment and page
// boundaries, with groups interleaved; memory grows with what is kept.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "query/function/kept_values.h"

using argus::query::KeptValues;

TEST_CASE("kept values: every group's values back in order, groups interleaved") {
  std::mt19937_64 rng(11);
  for (size_t groups : {size_t{1}, size_t{7}, size_t{1000}}) {
    CAPTURE(groups);
    KeptValues<int64_t> kept;
    kept.resize(groups);
    std::vector<std::vector<int64_t>> want(groups);
    // Uneven groups: some stay empty, some pass the largest segment (4,096) several times.
    const size_t rows = groups == 1 ? 20000 : 60000;
    for (size_t i = 0; i < rows; ++i) {
      const uint32_t g = static_cast<uint32_t>(rng() % groups);
      if (groups > 1 && g % 5 == 4) continue;
      const int64_t v = static_cast<int64_t>(rng());
      kept.append(g, v);
      want[g].push_back(v);
    }
    std::vector<int64_t> got;
    for (size_t g = 0; g < groups; ++g) {
      CHECK(kept.count(g) == want[g].size());
      kept.gather(g, &got);
      CHECK(got == want[g]);
    }
    const size_t bytes = rows * sizeof(int64_t);
    CHECK(kept.memoryBytes() >= bytes / 2);  // the values kept (a fifth of the groups skipped)
    CHECK(kept.memoryBytes() <= 3 * bytes + groups * 64 + (1 << 20));
  }
}

TEST_CASE("kept values: groups added after values were kept, and doubles") {
  KeptValues<double> kept;
  kept.resize(2);
  kept.append(1, 1.5);
  kept.resize(5);  // the group table grew: earlier groups keep their values
  kept.append(4, -2.0);
  kept.append(1, 3.0);
  std::vector<double> got;
  kept.gather(1, &got);
  CHECK(got == std::vector<double>{1.5, 3.0});
  kept.gather(4, &got);
  CHECK(got == std::vector<double>{-2.0});
  kept.gather(0, &got);
  CHECK(got.empty());
  CHECK(kept.count(3) == 0);
}

TEST_CASE("kept values: merged parts keep each group's values, appends go on after") {
  std::mt19937_64 rng(5);
  KeptValues<int64_t> a, b;
  a.resize(6);
  b.resize(4);
  std::vector<std::vector<int64_t>> want(6);
  // Part b's group g goes into a's group into[g]; a's group 5 gets nothing, b's group 3 holds
  // nothing, partial segments in the middle of the chains.
  const uint32_t into[4] = {2, 0, 4, 1};
  for (size_t i = 0; i < 9000; ++i) {
    const uint32_t g = static_cast<uint32_t>(rng() % 5);
    const int64_t v = static_cast<int64_t>(rng() % 1000);
    if (g == 4 || g == 1) continue;  // a's groups 1 and 4 start empty
    a.append(g, v);
    want[g].push_back(v);
  }
  for (size_t i = 0; i < 7000; ++i) {
    const uint32_t g = static_cast<uint32_t>(rng() % 3);
    const int64_t v = static_cast<int64_t>(rng() % 1000);
    b.append(g, v);
    want[into[g]].push_back(v);
  }
  a.mergeFrom(b, into, 4);
  for (uint32_t g : {0u, 2u, 4u}) {
    const int64_t v = static_cast<int64_t>(g) * 7;
    a.append(g, v);
    want[g].push_back(v);
  }
  std::vector<int64_t> got;
  for (size_t g = 0; g < 6; ++g) {
    CAPTURE(g);
    CHECK(a.count(g) == want[g].size());
    a.gather(g, &got);
    CHECK(got == want[g]);
  }
  CHECK(b.memoryBytes() == 0);
  CHECK(a.memoryBytes() >= 16000 * sizeof(int64_t));
}
