#include "capture/interval_math.h"

#include <algorithm>
#include <utility>

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
  // Each interval of the shorter list finds its first overlap in the longer one by binary
  // search (ends ascend in a merged list): a step's few communication intervals against
  // its every compute block, a walk over all of them before.
  if (a.size() > b.size()) std::swap(a, b);
  int64_t total = 0;
  const Interval* from = b.data();
  const Interval* const end = b.data() + b.size();
  for (const Interval& x : a) {
    from = std::partition_point(from, end, [&](const Interval& y) { return y.end <= x.begin; });
    for (const Interval* y = from; y != end && y->begin < x.end; ++y) total += std::min(x.end, y->end) - std::max(x.begin, y->begin);
  }
  return total;
}

}  // namespace argus::capture
