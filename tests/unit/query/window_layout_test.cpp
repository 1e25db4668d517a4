// buildWindowLayout: rows that arrive in the window's order (presorted: partitions found by
// comparing the key values) must get the layout of the same rows sorted (partitions found
// by their sort codes), and ROWS frames must be the SQL definition's, clamped to the partition.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "query/execution/sort_key.h"
#include "query/execution/window_layout.h"

using namespace argus::query;

namespace {

using K = FrameBoundKind;

// n rows of one partition key of `type`, drawn from a few values, some NULL, then sorted
// by their sort codes (the window's order), with an ascending BIGINT ORDER BY key.
struct SortedRows {
  Vector key, step;
  std::vector<std::string> strings;  // the VARCHAR key's bytes
};

SortedRows makeRows(LogicalType type, size_t n, std::mt19937_64& rng) {
  SortedRows r;
  Vector raw;
  raw.reset(type, n);
  r.strings.resize(n);
  const double doubles[] = {0.0, -0.0, 1.5, std::nan(""), -std::nan(""), std::numeric_limits<double>::infinity()};
  for (size_t i = 0; i < n; ++i) {
    const uint64_t x = rng() % 6;
    switch (type) {
      case LogicalType::kBigInt:
      case LogicalType::kId: raw.i64[i] = static_cast<int64_t>(x) - 2; break;
      case LogicalType::kDouble: raw.f64[i] = doubles[x]; break;
      case LogicalType::kBoolean: raw.b8[i] = x & 1; break;
      case LogicalType::kVarchar:
        r.strings[i] = std::string(x, 'a');
        raw.str[i] = r.strings[i];
        break;
      default: break;
    }
    if (rng() % 7 == 0) raw.setNull(i);
  }
  SortKeyColumn codes = encodeSortKey(raw, n, false, false);
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return codes.compare(a, b) < 0; });
  r.key.reset(type, n);
  r.step.reset(LogicalType::kBigInt, n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t from = order[i];
    switch (type) {
      case LogicalType::kBigInt:
      case LogicalType::kId: r.key.i64[i] = raw.i64[from]; break;
      case LogicalType::kDouble: r.key.f64[i] = raw.f64[from]; break;
      case LogicalType::kBoolean: r.key.b8[i] = raw.b8[from]; break;
      case LogicalType::kVarchar: r.key.str[i] = raw.str[from]; break;
      default: break;
    }
    if (!raw.isValid(from)) r.key.setNull(i);
    r.step.i64[i] = static_cast<int64_t>(i);
  }
  return r;
}

// A ROWS bound of position p in [ps, pe), as SQL defines it.
uint32_t expectedBound(const FrameBound& b, bool is_end, int64_t p, int64_t ps, int64_t pe) {
  int64_t v = 0;
  switch (b.kind) {
    case K::kUnboundedPreceding: return static_cast<uint32_t>(ps);
    case K::kUnboundedFollowing: return static_cast<uint32_t>(pe);
    case K::kPreceding: v = p - static_cast<int64_t>(b.offset); break;
    case K::kCurrentRow: v = p; break;
    case K::kFollowing: v = p + static_cast<int64_t>(b.offset); break;
  }
  if (is_end) ++v;
  return static_cast<uint32_t>(std::clamp(v, ps, pe));
}

}  // namespace

TEST_CASE("presorted rows get the partitions and frames of the same rows sorted") {
  std::mt19937_64 rng(11);
  const std::vector<WindowFrame> frames = {
      {FrameUnit::kRows, {K::kPreceding, 20, {}}, {K::kCurrentRow, 0, {}}},
      {FrameUnit::kRows, {K::kUnboundedPreceding, 0, {}}, {K::kFollowing, 2, {}}},
      {FrameUnit::kRows, {K::kFollowing, 1, {}}, {K::kFollowing, 3, {}}},
      {FrameUnit::kRows, {K::kPreceding, 3, {}}, {K::kPreceding, 1, {}}},
      {FrameUnit::kRows, {K::kCurrentRow, 0, {}}, {K::kUnboundedFollowing, 0, {}}},
      {FrameUnit::kRows, {K::kPreceding, 1e15, {}}, {K::kFollowing, 1e15, {}}},
      {FrameUnit::kRows, {K::kPreceding, 1, {}}, {K::kPreceding, 3, {}}},  // ends before it starts: empty
      {FrameUnit::kRows, {K::kFollowing, 3, {}}, {K::kFollowing, 1, {}}},
      {FrameUnit::kRange, {K::kPreceding, 2, {}}, {K::kCurrentRow, 0, {}}},
  };
  for (LogicalType type : {LogicalType::kBigInt, LogicalType::kId, LogicalType::kDouble, LogicalType::kBoolean, LogicalType::kVarchar}) {
    for (size_t n : {1, 2, 50, 700}) {
      SortedRows rows = makeRows(type, n, rng);
      WindowKeys keys;
      keys.partitions = {&rows.key};
      keys.orders = {&rows.step};
      keys.desc = {false};
      keys.nulls_first = {false};
      for (const WindowFrame& f : frames) {
        INFO("type " << static_cast<int>(type) << ", " << n << " rows, frame " << static_cast<int>(f.start.kind) << ".."
                     << static_cast<int>(f.end.kind));
        WindowLayout fast, sorted;
        buildWindowLayout(keys, f, true, false, n, &fast);
        buildWindowLayout(keys, f, false, false, n, &sorted);
        CHECK(fast.order == sorted.order);
        CHECK(fast.partition_start == sorted.partition_start);
        CHECK(fast.partition_end == sorted.partition_end);
        CHECK(fast.frame_start == sorted.frame_start);
        CHECK(fast.frame_end == sorted.frame_end);
        if (f.unit != FrameUnit::kRows) continue;
        for (uint32_t p = 0; p < n; ++p) {
          const uint32_t ps = fast.partition_start[p], pe = fast.partition_end[p];
          const uint32_t s = expectedBound(f.start, false, p, ps, pe);
          REQUIRE(fast.frame_start[p] == s);
          REQUIRE(fast.frame_end[p] == std::max(s, expectedBound(f.end, true, p, ps, pe)));
        }
      }
    }
  }
}

TEST_CASE("a presorted partition ends where any of its keys changes") {
  Vector job, rank, step;
  const int64_t jobs[] = {1, 1, 1, 1, 2, 2};
  const int64_t ranks[] = {0, 0, 1, 1, 1, 1};
  job.reset(LogicalType::kId, 6);
  rank.reset(LogicalType::kBigInt, 6);
  step.reset(LogicalType::kBigInt, 6);
  for (size_t i = 0; i < 6; ++i) {
    job.i64[i] = jobs[i];
    rank.i64[i] = ranks[i];
    step.i64[i] = static_cast<int64_t>(i);
  }
  WindowKeys keys;
  keys.partitions = {&job, &rank};
  keys.orders = {&step};
  keys.desc = {false};
  keys.nulls_first = {false};
  WindowLayout l;
  buildWindowLayout(keys, WindowFrame{FrameUnit::kRows, {K::kUnboundedPreceding, 0, {}}, {K::kCurrentRow, 0, {}}}, true, false, 6, &l);
  CHECK(l.partition_start == std::vector<uint32_t>{0, 0, 2, 2, 4, 4});
  CHECK(l.partition_end == std::vector<uint32_t>{2, 2, 4, 4, 6, 6});
  CHECK(l.frame_start == std::vector<uint32_t>{0, 0, 2, 2, 4, 4});
  CHECK(l.frame_end == std::vector<uint32_t>{1, 2, 3, 4, 5, 6});
}
