// DurationHistogram: a sparse, log-bucketed sketch of durations (DDSketch-style) with a
// fixed relative error of kRelativeError, exactly mergeable across steps and ranks.
//
// Bucket i > 0 holds durations d with gamma^(i-1) <= d < gamma^i, gamma = (1+a)/(1-a) =
// 101/99 taken as an exact rational, so 1 ns lands in bucket 1 and INT64_MAX in bucket
// kMaxIndex; bucket 0 holds d <= 0 (clamped). bucketOf() compares against a table of exact
// integer bounds (no floating point), so every platform agrees on every duration. Below
// 36 ns some buckets hold no integer at all. A quantile answers with the bucket's representative 2*gamma^i/(gamma+1),
// within `a` of every value in the bucket. Counts are exact, so merging two histograms
// equals the histogram of the union (bucket counts saturate at UINT32_MAX). The exact sum
// is kept by the owner (KernelStat::total_ns), not here. Not thread-safe; a value type.
#pragma once

#include <cassert>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/status.h"

namespace argus::model {

class DurationHistogram {
 public:
  static constexpr double kRelativeError = 0.01;
  // Largest bucket index: bucketOf(INT64_MAX). Indices outside [0, kMaxIndex] are corrupt.
  static constexpr int32_t kMaxIndex = 2184;

  struct Bucket {
    int32_t index;
    uint32_t count;
    bool operator==(const Bucket&) const = default;
  };

  // Bucket index of a duration in ns. Exact and deterministic (integer table lookups);
  // a few ns, no allocation: fit for the capture hot path.
  static int32_t bucketOf(int64_t dur_ns);
  // The integers in bucket `index` (1..kMaxIndex) are [lowerBound, upperBound):
  // lowerBound = ceil(gamma^(index-1)), upperBound = ceil(gamma^index) (above INT64_MAX for
  // kMaxIndex). Equal bounds mean an empty bucket. Bucket 0: [0, 1) by convention.
  static uint64_t lowerBound(int32_t index);
  static uint64_t upperBound(int32_t index);
  // Representative value of a bucket (ns), within kRelativeError of its members.
  static double valueOf(int32_t index);
  // The same representative as an integer, computed from the integer bounds with exact
  // arithmetic (identical on every platform); a bucket holding one integer returns it.
  static int64_t representative(int32_t index);
  // Sum of representative(index) * count: a total within kRelativeError of the exact sum
  // of the durations added, and deterministic. Producers that do not need exact
  // per-kernel totals store this one (KernelStat::total_ns), which the step codec then
  // codes in no bytes. Wraps modulo 2^64 on absurd counts.
  static int64_t sketchTotal(std::span<const Bucket> buckets);
  int64_t sketchTotal() const { return sketchTotal(buckets_); }

  void add(int64_t dur_ns, uint32_t n = 1);
  void merge(const DurationHistogram& other);
  void clear() { buckets_.clear(); }

  uint64_t count() const;
  bool empty() const { return buckets_.empty(); }
  // q in [0,1]; returns 0 for an empty histogram.
  double quantile(double q) const;
  // Sum of bucket representatives times counts: the total as the sketch sees it.
  double approxTotal() const;

  // Sorted by index, no zero counts.
  const std::vector<Bucket>& buckets() const { return buckets_; }
  // REQUIRES: sorted strictly by index, counts > 0 (checked; Corruption otherwise).
  Status assign(std::vector<Bucket> buckets);
  // Same contract as assign(), but copies into the existing buffer (no allocation once
  // the histogram has held that many buckets): for decoders that refill records.
  Status assignFrom(std::span<const Bucket> buckets);
  // Trusted fast path for decoders that validate as they parse: clears the buckets
  // (keeping their capacity) and calls fill(std::vector<Bucket>&), which appends the new
  // ones and returns true, or returns false on bad input (the histogram is then left
  // empty). REQUIRES: on true, the buckets meet assign()'s contract (asserted in debug
  // builds).
  template <typename Fill>
  bool refill(Fill&& fill) {
    buckets_.clear();
    if (!fill(buckets_)) {
      buckets_.clear();
      return false;
    }
    assert(isValid(buckets_) && "BUG: refill produced invalid buckets");
    return true;
  }
  // True when `buckets` meet assign()'s contract.
  static bool isValid(std::span<const Bucket> buckets);

  // Compact form: varint bucket count, then per bucket zigzag index delta (against the
  // previous index, the first against 0) and varint count. deserialize() rejects hostile
  // input with Corruption: bucket count beyond the bytes remaining, non-increasing or
  // out-of-range indices, zero or over-32-bit counts.
  void serialize(ByteWriter& w) const;
  Status deserialize(ByteReader& r);

  bool operator==(const DurationHistogram&) const = default;

 private:
  std::vector<Bucket> buckets_;
};

}  // namespace argus::model
