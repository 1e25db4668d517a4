// Fuzzes model::DurationHistogram::deserialize.
//
// Input: the bytes of a serialized histogram (possibly followed by anything). Invariants:
// an accepted histogram meets assign()'s contract, serializes and deserializes to itself,
// answers quantiles inside the bucket range, and merges with a copy of itself into the
// histogram whose counts doubled (saturating at UINT32_MAX).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/bytes.h"
#include "model/duration_histogram.h"
#include "tests/fuzz/fuzz_util.h"

using argus::model::DurationHistogram;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  argus::ByteReader r(argus::fuzz::asView(data, size), "fuzz histogram");
  DurationHistogram h;
  if (!h.deserialize(r).isOk()) return 0;
  FUZZ_CHECK(DurationHistogram::isValid(h.buckets()));
  FUZZ_CHECK(r.offset() <= size);

  std::string bytes;
  argus::ByteWriter w(&bytes);
  h.serialize(w);
  FUZZ_CHECK(bytes.size() <= r.offset());  // the canonical form is never longer
  argus::ByteReader r2(bytes, "fuzz histogram re-encoded");
  DurationHistogram back;
  FUZZ_CHECK(back.deserialize(r2).isOk());
  FUZZ_CHECK(r2.atEnd());
  FUZZ_CHECK(back == h);

  DurationHistogram assigned;
  FUZZ_CHECK(assigned.assignFrom(h.buckets()).isOk());
  FUZZ_CHECK(assigned == h);

  if (!h.empty()) {
    double lo = DurationHistogram::valueOf(h.buckets().front().index);
    double hi = DurationHistogram::valueOf(h.buckets().back().index);
    for (double q : {0.0, 0.01, 0.5, 0.99, 1.0}) {
      double v = h.quantile(q);
      FUZZ_CHECK(v >= lo && v <= hi);
    }
  }
  (void)h.approxTotal();

  DurationHistogram doubled = h;
  DurationHistogram copy = h;
  doubled.merge(copy);
  FUZZ_CHECK(DurationHistogram::isValid(doubled.buckets()));
  FUZZ_CHECK(doubled.buckets().size() == h.buckets().size());
  for (size_t i = 0; i < h.buckets().size(); ++i) {
    uint64_t want = std::min<uint64_t>(2ull * h.buckets()[i].count, UINT32_MAX);
    FUZZ_CHECK(doubled.buckets()[i].index == h.buckets()[i].index);
    FUZZ_CHECK(doubled.buckets()[i].count == want);
  }
  return 0;
}
