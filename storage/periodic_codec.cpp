#include "storage/periodic_codec.h"

#include <algorithm>
#include <cstring>

#include "base/bytes.h"
#include "storage/column_codec.h"

namespace argus::storage {
namespace {

// Repeats shorter than this stay literals: as a run they cost a count and the next
// literals' count, as literals a zero byte each.
constexpr size_t kMinRun = 3;
constexpr size_t kMinValues = 16;
constexpr size_t kMaxPeriod = 4096;

// The payload as tokens: sink.period(p), then alternately sink.literals(first, last) for
// rows [first, last) (at least one) and sink.repeat(n) for n >= 1 rows equal to the rows
// `period` before them; the last token ends at the last row. Returns false once the sink
// does (it has seen enough).
template <typename Sink>
bool walkTokens(std::span<const int64_t> v, size_t p, Sink& sink) {
  const size_t n = v.size();
  if (!sink.period(p)) return false;
  auto repeats = [&](size_t k) { return k >= p && v[k] == v[k - p]; };
  size_t i = 0;
  while (i < n) {
    // Literals up to the first run of kMinRun repeats, or up to a shorter run that ends
    // the values (cheaper as a count than as zero bytes).
    size_t run_start = n;
    for (size_t k = i; k < n; ++k) {
      if (!repeats(k)) {
        run_start = n;
        continue;
      }
      if (run_start == n) run_start = k;
      if (k + 1 - run_start >= kMinRun) break;
    }
    // At least one literal: row i never repeats (it is row 0, or the row after a run).
    const size_t lit_end = std::max(run_start, i + 1);
    if (!sink.literals(i, lit_end)) return false;
    i = lit_end;
    if (i == n) break;
    size_t e = i;
    while (e < n && repeats(e)) ++e;
    if (!sink.repeat(e - i)) return false;
    i = e;
  }
  return true;
}

// Counts the payload's bytes, giving up past `limit`.
struct SizeSink {
  std::span<const int64_t> v;
  size_t p = 0, bytes = 0, limit = SIZE_MAX;
  bool period(size_t period) {
    p = period;
    bytes += varintLen(period);
    return bytes <= limit;
  }
  bool literals(size_t first, size_t last) {
    bytes += varintLen(last - first);
    for (size_t i = first; i < last; ++i) bytes += zigzagLen(i >= p ? wrapSub(v[i], v[i - p]) : v[i]);
    return bytes <= limit;
  }
  bool repeat(size_t n) {
    bytes += varintLen(n);
    return bytes <= limit;
  }
};

struct WriteSink {
  std::span<const int64_t> v;
  VarintWriter w;
  size_t p = 0;
  bool period(size_t period) {
    p = period;
    w.varint(period);
    return true;
  }
  bool literals(size_t first, size_t last) {
    w.varint(last - first);
    char* out = w.reserve(10 * (last - first));
    for (size_t i = first; i < last; ++i) out = putZigzag(out, i >= p ? wrapSub(v[i], v[i - p]) : v[i]);
    w.commit(out);
    return true;
  }
  bool repeat(size_t n) {
    w.varint(n);
    return true;
  }
};

}  // namespace

bool choosePeriod(std::span<const int64_t> values, PeriodicChoice* out) {
  const size_t n = values.size();
  if (n < kMinValues) return false;
  // Candidates: where the first and the second value recur (the rows of one step, when
  // steps repeat their rows), the first few times each.
  size_t candidates[6];
  size_t count = 0;
  for (size_t first = 0; first < 2; ++first) {
    size_t found = 0;
    for (size_t j = first + 1; j < n && j - first <= kMaxPeriod && found < 3; ++j) {
      if (values[j] != values[first]) continue;
      ++found;
      const size_t p = j - first;
      if (std::find(candidates, candidates + count, p) == candidates + count) candidates[count++] = p;
    }
  }
  bool any = false;
  for (size_t c = 0; c < count; ++c) {
    SizeSink s{values};
    if (any) s.limit = out->bytes;
    if (!walkTokens(values, candidates[c], s) || (any && s.bytes >= out->bytes)) continue;
    *out = PeriodicChoice{candidates[c], s.bytes};
    any = true;
  }
  return any;
}

void encodePeriodic(std::span<const int64_t> values, size_t period, std::string* out) {
  WriteSink s{values, VarintWriter(out)};
  walkTokens(values, period, s);
  s.w.finish();
}

Status decodePeriodic(std::string_view raw, size_t rows, std::vector<int64_t>* out) {
  ByteReader r(raw, "periodic");
  uint64_t p = 0;
  ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&p, rows, "period"));
  if (p == 0) return Status::corruption("periodic: period 0");
  out->resize(rows);
  int64_t* const o = out->data();
  size_t i = 0;
  while (i < rows) {
    uint64_t n = 0;
    ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&n, rows - i, "literal count"));
    if (n == 0) return Status::corruption("periodic: empty literal run at row " + std::to_string(i));
    for (const size_t end = i + n; i < end; ++i) {
      int64_t d = 0;
      ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&d));
      o[i] = i >= p ? wrapAdd(o[i - p], d) : d;
    }
    if (i == rows) break;
    ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&n, rows - i, "repeat count"));
    if (n == 0) return Status::corruption("periodic: empty repeat run at row " + std::to_string(i));
    if (i < p) return Status::corruption("periodic: a repeat at row " + std::to_string(i) + " before a full period");
    // The rows a period back, copied: [i - span, i) repeats with period p (span a multiple
    // of p), and so does each copy of it, so each copy takes all of it and doubles it, never
    // overlapping (a memcpy a period at a time was 230 calls a kernels.count chunk).
    for (size_t span = p; n > 0;) {
      const size_t k = std::min<uint64_t>(n, span);
      std::memcpy(o + i, o + i - span, k * sizeof(int64_t));
      i += k;
      n -= k;
      span += k;  // doubled, or the run is done
    }
  }
  if (!r.atEnd()) return Status::corruption("periodic: trailing bytes");
  return Status::ok();
}

}  // namespace argus::storage
