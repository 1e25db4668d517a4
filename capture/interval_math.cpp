#include "capture/interval_math.h"

#include <algorithm>

namespace argus::capture {

int64_t unionOf(std::span<Interval> intervals, std::vector<Interval>* out) {
  out->clear();
  auto byBegin = [](const Interval& x, const Interval& y) { return x.begin < y.begin; };
  if (!std::is_sorted(intervals.begin(), intervals.end(), byBegin)) std::sort(intervals.begin(), intervals.end(), byBegin);
  for (const Interval& iv : intervals) appendMerged(out, iv.begin, iv.end);
  return lengthOf(*out);
}

int64_t lengthOf(std::span<const Interval> merged) {
  int64_t total = 0;
  for (const Interval& iv : merged) total += iv.end - iv.begin;
  return total;
}

int64_t clippedLength(std::span<const Interval> merged, int64_t lo, int64_t hi) {
  int64_t total = 0;
  for (const Interval& iv : merged) {
    int64_t b = std::max(iv.begin, lo), e = std::min(iv.end, hi);
    if (e > b) total += e - b;
  }
  return total;
}

int64_t intersectionLength(std::span<const Interval> a, std::span<const Interval> b) {
  int64_t total = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t lo = std::max(a[i].begin, b[j].begin), hi = std::min(a[i].end, b[j].end);
    if (hi > lo) total += hi - lo;
    if (a[i].end < b[j].end) ++i; else ++j;
  }
  return total;
}

}  // namespace argus::capture
