// HistColumn: histograms that keep their bucket buffers across clear(), resize() and the
// swaps that hand them from a block to a batch.
#include <doctest/doctest.h>

#include "storage/hist_column.h"

using namespace argus;
using argus::model::DurationHistogram;
using argus::storage::HistColumn;

namespace {

DurationHistogram histOf(int64_t dur, uint32_t n) {
  DurationHistogram h;
  h.add(dur, n);
  return h;
}

}  // namespace

TEST_CASE("resize gives empty histograms, reusing the buffers of elements cleared before") {
  HistColumn c;
  c.push_back(histOf(1000, 3));
  c.push_back(histOf(5000, 1));
  const auto* buffer = c[1].buckets().data();
  c.clear();
  CHECK(c.empty());
  c.resize(3);
  REQUIRE(c.size() == 3);
  for (const DurationHistogram& h : c) CHECK(h.empty());
  c[1].add(7000, 2);
  CHECK(c[1].buckets().data() == buffer);  // refilled in place: no allocation
}

TEST_CASE("takeFrom appends by swapping; shrinking and growing again never shows old contents") {
  HistColumn block, batch;
  for (int i = 1; i <= 4; ++i) block.push_back(histOf(1000 * i, static_cast<uint32_t>(i)));
  batch.push_back(histOf(99, 1));
  batch.takeFrom(block, 1, 3);
  REQUIRE(batch.size() == 3);
  CHECK(batch[1] == histOf(2000, 2));
  CHECK(batch[2] == histOf(3000, 3));
  CHECK(block.size() == 4);  // its rows 1-2 now hold spares, unread by contract

  HistColumn rest;
  rest.takeFrom(batch, 1, batch.size());
  batch.resize(1);
  CHECK(batch == std::vector<DurationHistogram>{histOf(99, 1)});
  batch.resize(2);
  CHECK(batch[1].empty());
  CHECK(rest == std::vector<DurationHistogram>{histOf(2000, 2), histOf(3000, 3)});
}
