// Exact interval arithmetic for the step assembler: unions by sort-and-sweep, and lengths
// of differences and intersections of merged lists. Intervals are half-open [begin, end)
// in ns; all results are exact int64 ns (no sampling, no rounding).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace argus::capture {

struct Interval {
  int64_t begin = 0;
  int64_t end = 0;  // > begin for a non-empty interval
  bool operator==(const Interval&) const = default;
};

// Appends [begin, end) to the merged list *out, which must be built in non-decreasing
// begin order: extends the last interval when they overlap or touch.
inline void appendMerged(std::vector<Interval>* out, int64_t begin, int64_t end) {
  if (end <= begin) return;
  if (!out->empty() && begin <= out->back().end) {
    if (end > out->back().end) out->back().end = end;
    return;
  }
  out->push_back({begin, end});
}

// Sorts `intervals` by begin and merges them into *out (cleared first; reuses capacity).
// Returns the total length of the union.
int64_t unionOf(std::span<Interval> intervals, std::vector<Interval>* out);

// Total length of a merged list (sorted, disjoint).
int64_t lengthOf(std::span<const Interval> merged);

// Length of the merged list `a` inside [lo, hi).
int64_t clippedLength(std::span<const Interval> merged, int64_t lo, int64_t hi);

// |a ∩ b| for two merged lists.
int64_t intersectionLength(std::span<const Interval> a, std::span<const Interval> b);

// |a \ b| for two merged lists.
inline int64_t differenceLength(std::span<const Interval> a, std::span<const Interval> b) {
  return lengthOf(a) - intersectionLength(a, b);
}

}  // namespace argus::capture
