#include "model/duration_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace argus::model {

namespace {

constexpr double kGamma = (1.0 + DurationHistogram::kRelativeError) / (1.0 - DurationHistogram::kRelativeError);
const double kLogGamma = std::log(kGamma);

// Exact integer bucket bounds: kBucketBounds[i] = ceil(gamma^i) with gamma = 101/99 taken as
// the exact rational (1+a)/(1-a). For an integer d, gamma^(i-1) <= d < gamma^i holds exactly
// when kBucketBounds[i-1] <= d < kBucketBounds[i], so bucketOf() is integer comparisons
// only: the same answer on every platform and math library, which the step codec's
// "implied" histograms rely on. kBucketBounds[kMaxIndex] > INT64_MAX.
constexpr uint64_t kBucketBounds[DurationHistogram::kMaxIndex + 1] = {
#include "model/duration_histogram_bounds.inc"
};
static_assert(kBucketBounds[0] == 1 && kBucketBounds[DurationHistogram::kMaxIndex - 1] <= uint64_t{INT64_MAX} &&
              kBucketBounds[DurationHistogram::kMaxIndex] > uint64_t{INT64_MAX});

// First guess for bucketOf: durations are keyed by their bit length and the 6 bits below the
// leading one (64 slices per octave). A slice spans a ratio of at most 2^(1/64) < gamma, so
// it holds at most one bucket bound and the guess is off by at most one bucket (exact below
// 128 ns, where every value has its own key). kSliceFirstBucket[key] is the bucket of the
// smallest duration with that key.
constexpr int kSliceBits = 6;
constexpr int kSlices = 1 << kSliceBits;

constexpr uint32_t sliceKey(uint64_t d) {
  int e = std::bit_width(d) - 1;  // d >= 1
  uint64_t slice = e >= kSliceBits ? (d >> (e - kSliceBits)) : (d << (kSliceBits - e));
  return static_cast<uint32_t>(e) * kSlices + static_cast<uint32_t>(slice & (kSlices - 1));
}

constexpr int32_t exactBucket(uint64_t d) {  // binary search; d >= 1
  int32_t lo = 1, hi = DurationHistogram::kMaxIndex;  // answer in [lo, hi]
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (d < kBucketBounds[mid]) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

struct SliceTable {
  int16_t first[63 * kSlices];
};

constexpr SliceTable makeSliceTable() {
  SliceTable t{};
  for (int e = 0; e < 63; ++e) {
    for (int s = 0; s < kSlices; ++s) {
      uint64_t lead = static_cast<uint64_t>(kSlices + s);
      uint64_t d = e >= kSliceBits ? lead << (e - kSliceBits) : lead >> (kSliceBits - e);
      t.first[e * kSlices + s] = static_cast<int16_t>(exactBucket(d));
    }
  }
  return t;
}

constexpr SliceTable kSliceFirstBucket = makeSliceTable();

// kRepresentative[i]: round(2*L*H / (L+H)) with L and H the smallest and largest integer
// in bucket i, the harmonic mean of its integer ends (what valueOf() computes from the real
// bounds), so it is within kRelativeError (+ half a unit of rounding) of every member, and
// computed in exact integer arithmetic so that every platform agrees. A bucket holding one
// integer gets that integer; one holding none gets its lower bound.
struct RepresentativeTable {
  int64_t value[DurationHistogram::kMaxIndex + 1];
};

constexpr RepresentativeTable makeRepresentativeTable() {
  RepresentativeTable t{};
  for (int32_t i = 1; i <= DurationHistogram::kMaxIndex; ++i) {
    unsigned __int128 lo = kBucketBounds[i - 1], hi = kBucketBounds[i] - 1;
    if (hi > static_cast<unsigned __int128>(INT64_MAX)) hi = INT64_MAX;
    unsigned __int128 rep = hi < lo ? lo : (2 * lo * hi + (lo + hi) / 2) / (lo + hi);
    t.value[i] = rep > static_cast<unsigned __int128>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(rep);
  }
  return t;
}

constexpr RepresentativeTable kRepresentative = makeRepresentativeTable();
static_assert(kRepresentative.value[1] == 1 && kRepresentative.value[200] == 54 && kRepresentative.value[230] == 98);

uint32_t saturatingAdd(uint32_t a, uint32_t b) {
  uint32_t s = a + b;
  return s < a ? std::numeric_limits<uint32_t>::max() : s;
}

}  // namespace

int32_t DurationHistogram::bucketOf(int64_t dur_ns) {
  if (dur_ns <= 0) return 0;
  uint64_t d = static_cast<uint64_t>(dur_ns);
  int32_t idx = kSliceFirstBucket.first[sliceKey(d)];
  // The guess is never above the answer and rarely one below; kBucketBounds[kMaxIndex] >
  // INT64_MAX ends the walk.
  while (d >= kBucketBounds[idx]) ++idx;
  return idx;
}

uint64_t DurationHistogram::lowerBound(int32_t index) {
  if (index <= 0) return 0;
  if (index > kMaxIndex) index = kMaxIndex;
  return kBucketBounds[index - 1];
}

uint64_t DurationHistogram::upperBound(int32_t index) {
  if (index <= 0) return 1;
  if (index > kMaxIndex) index = kMaxIndex;
  return kBucketBounds[index];
}

int64_t DurationHistogram::representative(int32_t index) {
  if (index <= 0) return 0;
  return kRepresentative.value[index > kMaxIndex ? kMaxIndex : index];
}

int64_t DurationHistogram::sketchTotal(std::span<const Bucket> buckets) {
  uint64_t total = 0;  // wraps on hostile counts, identically everywhere
  for (const Bucket& b : buckets) {
    uint32_t i = static_cast<uint32_t>(std::clamp(b.index, 0, kMaxIndex));  // index 0 holds 0
    total += static_cast<uint64_t>(kRepresentative.value[i]) * b.count;
  }
  return static_cast<int64_t>(total);
}

double DurationHistogram::valueOf(int32_t index) {
  if (index <= 0) return 0.0;
  return 2.0 * std::exp(kLogGamma * index) / (kGamma + 1.0);
}

void DurationHistogram::add(int64_t dur_ns, uint32_t n) {
  if (n == 0) return;
  int32_t idx = bucketOf(dur_ns);
  // Fast path: durations of one kernel cluster, and the newest often hits the last bucket.
  if (!buckets_.empty() && buckets_.back().index == idx) {
    buckets_.back().count = saturatingAdd(buckets_.back().count, n);
    return;
  }
  auto it = std::lower_bound(buckets_.begin(), buckets_.end(), idx,
                             [](const Bucket& b, int32_t i) { return b.index < i; });
  if (it != buckets_.end() && it->index == idx) {
    it->count = saturatingAdd(it->count, n);
  } else {
    buckets_.insert(it, Bucket{idx, n});
  }
}

void DurationHistogram::merge(const DurationHistogram& other) {
  if (other.buckets_.empty()) return;
  if (buckets_.empty()) {
    buckets_ = other.buckets_;
    return;
  }
  // While other's buckets are all here already (hist_merge over one rank's steps keeps
  // hitting the same buckets), add their counts in place: a binary search each from the
  // last hit, instead of rewriting every bucket of ours per merge.
  size_t i = 0, j = 0;
  for (; j < other.buckets_.size(); ++j, ++i) {
    const int32_t want = other.buckets_[j].index;
    i = static_cast<size_t>(std::lower_bound(buckets_.begin() + static_cast<ptrdiff_t>(i), buckets_.end(), want,
                                             [](const Bucket& b, int32_t ix) { return b.index < ix; }) -
                            buckets_.begin());
    if (i == buckets_.size() || buckets_[i].index != want) break;
    buckets_[i].count = saturatingAdd(buckets_[i].count, other.buckets_[j].count);
  }
  if (j == other.buckets_.size()) return;
  // A new bucket: merge the rest of other's buckets (from j) into a new array.
  std::vector<Bucket> out;
  out.reserve(buckets_.size() + other.buckets_.size() - j);
  i = 0;
  while (i < buckets_.size() || j < other.buckets_.size()) {
    if (j == other.buckets_.size() || (i < buckets_.size() && buckets_[i].index < other.buckets_[j].index)) {
      out.push_back(buckets_[i++]);
    } else if (i == buckets_.size() || other.buckets_[j].index < buckets_[i].index) {
      out.push_back(other.buckets_[j++]);
    } else {
      out.push_back(Bucket{buckets_[i].index, saturatingAdd(buckets_[i].count, other.buckets_[j].count)});
      ++i;
      ++j;
    }
  }
  buckets_ = std::move(out);
}

uint64_t DurationHistogram::count() const {
  uint64_t n = 0;
  for (const Bucket& b : buckets_) n += b.count;
  return n;
}

double DurationHistogram::quantile(double q) const {
  if (buckets_.empty()) return 0.0;
  if (!(q > 0.0)) q = 0.0;  // also maps NaN to 0
  if (q > 1.0) q = 1.0;
  // DDSketch: the bucket holding the element of rank q*(n-1) (0-based).
  double rank = q * static_cast<double>(count() - 1);
  uint64_t seen = 0;
  for (const Bucket& b : buckets_) {
    seen += b.count;
    if (static_cast<double>(seen) > rank) return valueOf(b.index);
  }
  return valueOf(buckets_.back().index);
}

double DurationHistogram::approxTotal() const {
  double total = 0.0;
  for (const Bucket& b : buckets_) total += valueOf(b.index) * b.count;
  return total;
}

namespace {

Status validateBuckets(std::span<const DurationHistogram::Bucket> buckets) {
  for (size_t i = 0; i < buckets.size(); ++i) {
    if (buckets[i].index < 0 || buckets[i].index > DurationHistogram::kMaxIndex) {
      return Status::corruption("histogram: bucket index " + std::to_string(buckets[i].index) + " out of range");
    }
    if (buckets[i].count == 0) return Status::corruption("histogram: zero count in bucket " + std::to_string(buckets[i].index));
    if (i > 0 && buckets[i].index <= buckets[i - 1].index) {
      return Status::corruption("histogram: bucket indices not strictly increasing at " + std::to_string(buckets[i].index));
    }
  }
  return Status::ok();
}

}  // namespace

Status DurationHistogram::assign(std::vector<Bucket> buckets) {
  ARGUS_RETURN_IF_ERROR(validateBuckets(buckets));
  buckets_ = std::move(buckets);
  return Status::ok();
}

bool DurationHistogram::isValid(std::span<const Bucket> buckets) { return validateBuckets(buckets).isOk(); }

Status DurationHistogram::assignFrom(std::span<const Bucket> buckets) {
  ARGUS_RETURN_IF_ERROR(validateBuckets(buckets));
  buckets_.assign(buckets.begin(), buckets.end());
  return Status::ok();
}

void DurationHistogram::serialize(ByteWriter& w) const {
  w.putVarint(buckets_.size());
  int32_t prev = 0;
  for (const Bucket& b : buckets_) {
    w.putSignedVarint(static_cast<int64_t>(b.index) - prev);
    w.putVarint(b.count);
    prev = b.index;
  }
}

Status DurationHistogram::deserialize(ByteReader& r) {
  uint64_t n;
  // Each bucket takes at least two bytes; there are at most kMaxIndex + 1 buckets.
  uint64_t limit = std::min<uint64_t>(r.remaining() / 2, kMaxIndex + 1);
  ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&n, limit, "histogram bucket count"));
  std::vector<Bucket> buckets;
  buckets.reserve(static_cast<size_t>(n));
  int64_t prev = 0;
  for (uint64_t i = 0; i < n; ++i) {
    int64_t delta;
    uint64_t count;
    ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&delta));
    if (i > 0 && delta <= 0) {
      return Status::corruption("histogram: bucket index not increasing at offset " + std::to_string(r.offset()));
    }
    if (delta < 0 || delta > kMaxIndex || prev + delta > kMaxIndex) {
      return Status::corruption("histogram: bucket index out of range at offset " + std::to_string(r.offset()));
    }
    ARGUS_RETURN_IF_ERROR(r.getVarint(&count));
    if (count == 0 || count > std::numeric_limits<uint32_t>::max()) {
      return Status::corruption("histogram: bucket count " + std::to_string(count) + " invalid at offset " + std::to_string(r.offset()));
    }
    prev += delta;
    buckets.push_back(Bucket{static_cast<int32_t>(prev), static_cast<uint32_t>(count)});
  }
  buckets_ = std::move(buckets);
  return Status::ok();
}

}  // namespace argus::model
