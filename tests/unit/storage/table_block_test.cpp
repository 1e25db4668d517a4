// TableBlock::groups (dense group ids in order of first appearance, as grouped codecs and
// the chunk reader require), the histogram summaries the chunk writer codes from, and
// stepsIn.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <tuple>

#include "storage/hist_codec.h"
#include "storage/table_block.h"

using namespace argus;
using namespace argus::storage;

namespace {

// The reference: a std::map from the key tuple to the next fresh id.
std::vector<uint32_t> referenceGroups(const TableBlock& b) {
  std::map<std::vector<int64_t>, uint32_t> seen;
  std::vector<uint32_t> ids;
  for (size_t i = 0; i < b.rows; ++i) {
    std::vector<int64_t> key;
    for (uint8_t k : groupKeyColumns(b.table)) key.push_back(b.columns[k].ints[i]);
    auto [it, fresh] = seen.try_emplace(key, static_cast<uint32_t>(seen.size()));
    ids.push_back(it->second);
  }
  return ids;
}

// groups() against the reference: the same ids, and as many groups as the ids name.
void checkGroups(const TableBlock& b) {
  RowContext g = b.groups();
  std::vector<uint32_t> want = referenceGroups(b);
  CHECK(g.ids == want);
  uint32_t count = 0;
  for (uint32_t id : want) count = std::max(count, id + 1);
  CHECK(g.count == count);
}

}  // namespace

TEST_CASE("groups are dense ids in order of first appearance, whatever the row order") {
  std::mt19937_64 rng(7);
  for (Table t : {Table::kKernels, Table::kCollectives, Table::kStacks}) {
    for (int shape = 0; shape < 4; ++shape) {
      CAPTURE(tableName(t));
      CAPTURE(shape);
      TableBlock b;
      b.reset(t);
      size_t rows = shape == 3 ? 5000 : 300;
      for (size_t i = 0; i < rows; ++i) {
        // 0: a repeating cycle (steps), 1: random order, 2: few keys with equal first
        // columns (tuple comparison matters), 3: many groups (the table grows).
        uint64_t g = shape == 0 ? i % 17 : shape == 1 ? rng() % 23 : shape == 2 ? rng() % 4 : rng() % 3000;
        for (uint8_t k : groupKeyColumns(t)) {
          int64_t v = shape == 2 && k != groupKeyColumns(t).back() ? 42 : static_cast<int64_t>(g * 0x9e3779b97f4a7c15ull + k);
          b.columns[k].ints.push_back(v);
        }
      }
      b.rows = rows;
      checkGroups(b);
    }
  }
}

TEST_CASE("groups over steps that repeat their rows, with and without changes from step to step") {
  // groups() tries row i - (the first step's row count) first, a stretch of rows at a time:
  // steps of equal and unequal sizes, and keys that change within a stretch, must give the
  // same ids as the reference.
  std::mt19937_64 rng(19);
  for (size_t period : {1, 3, 17, 64, 100}) {
    for (int change = 0; change < 4; ++change) {
      CAPTURE(period);
      CAPTURE(change);
      TableBlock b;
      b.reset(Table::kKernels);
      for (int step = 0; step < 40; ++step) {
        // 0: every step the same; 1: a key changed now and then; 2: a row dropped or added
        // now and then (the rows after it shift); 3: the order of two rows swapped.
        size_t n = period;
        if (change == 2 && step > 0 && rng() % 4 == 0) n = rng() % 2 ? n + 1 : n - 1;
        std::vector<uint64_t> keys(n);
        for (size_t j = 0; j < n; ++j) keys[j] = j;
        if (change == 1 && step > 0 && rng() % 3 == 0) keys[rng() % n] = 1000 + rng() % 5;
        if (change == 3 && step > 0 && n > 1 && rng() % 3 == 0) std::swap(keys[0], keys[n - 1]);
        for (uint64_t key : keys) {
          for (uint8_t k : groupKeyColumns(b.table)) b.columns[k].ints.push_back(static_cast<int64_t>(key * 0x9e3779b97f4a7c15ull + k));
        }
        b.row_counts.push_back(static_cast<int64_t>(n));
        b.rows += n;
      }
      checkGroups(b);
    }
  }
}

TEST_CASE("histogram summaries match the histograms") {
  std::mt19937_64 rng(3);
  std::vector<model::DurationHistogram> hists(200);
  for (size_t i = 0; i < hists.size(); ++i) {
    if (i % 7 == 0) continue;  // some empty rows
    for (int j = 0; j < 1 + static_cast<int>(i % 11); ++j) hists[i].add(static_cast<int64_t>(1000 + rng() % 100000), 1 + static_cast<uint32_t>(rng() % 5));
  }
  std::vector<HistRow> rows;
  std::vector<model::DurationHistogram::Bucket> buckets;
  summarizeHists(hists, &rows, &buckets);
  REQUIRE(rows.size() == hists.size());
  for (size_t i = 0; i < hists.size(); ++i) {
    const auto& h = hists[i].buckets();
    CAPTURE(i);
    CHECK(rows[i].count == hists[i].count());
    CHECK(rows[i].prediction == histPrediction(hists[i]));
    CHECK(rows[i].buckets == h.size());
    CHECK(std::equal(h.begin(), h.end(), buckets.begin() + static_cast<std::ptrdiff_t>(rows[i].begin)));
    if (h.empty()) continue;
    CHECK(rows[i].first == h.front().index);
    CHECK(rows[i].last == h.back().index);
    auto mode = std::max_element(h.begin(), h.end(), [](const auto& a, const auto& b) { return a.count < b.count; });
    CHECK(rows[i].mode == mode->index);
  }
}

TEST_CASE("stepsIn finds the steps of a range in blocks with and without gaps") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 2000; ++trial) {
    TableBlock b;
    b.reset(Table::kSteps);
    const int64_t first = static_cast<int64_t>(rng() % 600);
    const size_t n = rng() % 40;
    const bool gaps = trial % 2 == 1, repeats = trial % 5 == 0;  // repeats: ascending, not strictly
    for (int64_t s = first; b.steps.size() < n; s += gaps ? 1 + static_cast<int64_t>(rng() % 3) : 1) {
      b.steps.push_back(s);
      if (repeats && rng() % 4 == 0 && b.steps.size() < n) b.steps.push_back(s);
    }
    for (int q = 0; q < 20; ++q) {
      const uint64_t from = rng() % 700, to = q % 7 == 0 ? from - std::min<uint64_t>(from, rng() % 3) : from + rng() % 60;
      auto below = [](int64_t step, uint64_t bound) { return static_cast<uint64_t>(step) < bound; };
      const size_t want_first = static_cast<size_t>(std::lower_bound(b.steps.begin(), b.steps.end(), from, below) - b.steps.begin());
      const size_t want_last = std::max(want_first, static_cast<size_t>(std::lower_bound(b.steps.begin(), b.steps.end(), to, below) - b.steps.begin()));
      CAPTURE(trial);
      CAPTURE(from);
      CAPTURE(to);
      CHECK(b.stepsIn(from, to) == std::pair<size_t, size_t>{want_first, want_last});
    }
  }
  TableBlock far;
  far.reset(Table::kSteps);
  far.steps = {INT64_MAX - 2, INT64_MAX - 1, INT64_MAX};
  CHECK(far.stepsIn(0, UINT64_MAX) == std::pair<size_t, size_t>{0, 3});
  CHECK(far.stepsIn(static_cast<uint64_t>(INT64_MAX), UINT64_MAX) == std::pair<size_t, size_t>{2, 3});
}
