// Sparse-histogram codecs: docs/format/codecs.md#histograms.
//
// Each histogram H is coded against a reference R (the empty histogram for kHistSparse,
// the previous histogram of the row's group for kHistSparseGrouped) into four streams, so
// that similar quantities sit together for zstd:
//   A: zigzag(buckets(H) - buckets(R))
//   B: zigzag(first index(H) - first index(R))       (only when H has buckets; R empty: 0)
//   C: index gaps idx[i] - idx[i-1] - 1, i >= 1       (varint, >= 0)
//   D: zigzag(count(H, idx) - count(R, idx)) per bucket of H (R's count at the same index)
// Payload: varint len(A), len(B), len(C), then A B C D.
#include "storage/hist_codec.h"

#include <algorithm>
#include <bit>

#include "base/bytes.h"
#include "storage/packed_deltas.h"
#include "storage/varint_cursor.h"

namespace argus::storage {
namespace {

using model::DurationHistogram;
using Bucket = DurationHistogram::Bucket;

// base + a delta read from the payload into *sum; false for a sum past int64, which is
// corruption, not undefined behaviour (every base here is small, so such a sum is out of
// range anyway). A bool, not a Status: it runs per row, and a Status cost ~17 instructions.
bool addDelta(int64_t base, int64_t delta, int64_t* sum) { return !__builtin_add_overflow(base, delta, sum); }

Status outOfRange(const char* what) { return Status::corruption(std::string(what) + " out of range"); }

// Count of `index` in the sorted bucket list `ref`, advancing *pos (a merge walk).
uint32_t refCount(const std::vector<Bucket>& ref, size_t* pos, int32_t index) {
  while (*pos < ref.size() && ref[*pos].index < index) ++*pos;
  if (*pos < ref.size() && ref[*pos].index == index) return ref[*pos].count;
  return 0;
}

void encodeOne(const std::vector<Bucket>& h, const std::vector<Bucket>& ref, ByteWriter& a, ByteWriter& b, ByteWriter& c, ByteWriter& d) {
  a.putSignedVarint(static_cast<int64_t>(h.size()) - static_cast<int64_t>(ref.size()));
  if (h.empty()) return;
  int64_t ref_first = ref.empty() ? 0 : ref[0].index;
  b.putSignedVarint(static_cast<int64_t>(h[0].index) - ref_first);
  size_t pos = 0;
  for (size_t i = 0; i < h.size(); ++i) {
    if (i > 0) c.putVarint(static_cast<uint64_t>(static_cast<int64_t>(h[i].index) - h[i - 1].index - 1));
    d.putSignedVarint(static_cast<int64_t>(h[i].count) - static_cast<int64_t>(refCount(ref, &pos, h[i].index)));
  }
}

}  // namespace

bool encodeHistsWith(CodecId codec, std::span<const DurationHistogram> values, const RowContext* groups, std::string* out) {
  if (codec == CodecId::kHistWindow) return encodeHistWindow(values, groups, out);
  bool grouped = codec == CodecId::kHistSparseGrouped;
  if (codec != CodecId::kHistSparse && !grouped) return false;
  if (grouped && (groups == nullptr || groups->ids.size() != values.size())) return false;
  std::string sa, sb, sc, sd;
  ByteWriter a(&sa), b(&sb), c(&sc), d(&sd);
  static const std::vector<Bucket> kEmpty;
  std::vector<const std::vector<Bucket>*> prev;
  if (grouped) prev.assign(groups->count, &kEmpty);
  for (size_t i = 0; i < values.size(); ++i) {
    const auto& h = values[i].buckets();
    if (grouped) {
      const std::vector<Bucket>*& p = prev[groups->ids[i]];
      encodeOne(h, *p, a, b, c, d);
      p = &h;
    } else {
      encodeOne(h, kEmpty, a, b, c, d);
    }
  }
  ByteWriter w(out);
  w.putVarint(sa.size());
  w.putVarint(sb.size());
  w.putVarint(sc.size());
  w.putBytes(sa);
  w.putBytes(sb);
  w.putBytes(sc);
  w.putBytes(sd);
  return true;
}

namespace {

// Index of the largest count, lowest index on ties; 0 for no buckets.
int32_t modeOf(const std::vector<Bucket>& h) {
  uint32_t best = 0;
  int32_t mode = 0;
  for (const Bucket& b : h) {
    if (b.count > best) {
      best = b.count;
      mode = b.index;
    }
  }
  return mode;
}

// The slot whose count is implied by the row's total: the reference's mode when that lies
// inside [first, last], else `last`. The mode is where a count varies most, so leaving it
// out saves the most bits. `ref_mode` is null without a non-empty reference.
int64_t impliedSlot(const int32_t* ref_mode, int64_t first, int64_t last) {
  if (ref_mode != nullptr && *ref_mode >= first && *ref_mode <= last) return *ref_mode;
  return last;
}

// A stream of the window codec: varint raw length, varint stored length, bytes; zstd'ed
// on its own when that pays (zstdPays).
void putStream(ByteWriter& w, const std::string& raw) {
  thread_local std::string frame;
  bool z = raw.size() >= 32 && zstdCompress(raw, &frame) && zstdPays(raw.size(), varintLen(raw.size()) + frame.size());
  w.putVarint(raw.size());
  w.putVarint(z ? frame.size() : raw.size());
  w.putBytes(z ? std::string_view(frame) : std::string_view(raw));
}

// A stream's raw length and its stored bytes, r past them.
Status readStream(ByteReader& r, size_t max_raw, uint64_t* raw_len, std::string_view* stored) {
  uint64_t stored_len = 0;
  ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(raw_len, max_raw, "stream raw length"));
  ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&stored_len, r.remaining(), "stream stored length"));
  return r.getBytes(stored_len, stored);
}

// A segment's packed deltas: varint length, bytes.
Status getPacked(ByteReader& r, size_t max_len, std::string_view* out) {
  uint64_t len = 0;
  ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&len, max_len, "packed deltas length"));
  return r.getBytes(len, out);
}

Status getStream(ByteReader& r, size_t max_raw, std::string* scratch, std::string_view* out) {
  uint64_t raw_len = 0;
  std::string_view stored;
  ARGUS_RETURN_IF_ERROR(readStream(r, max_raw, &raw_len, &stored));
  if (stored.size() == raw_len) {
    *out = stored;
    return Status::ok();
  }
  return decompressZstd(raw_len, stored, scratch, out);
}

Status truncatedStream(const char* stream, size_t row) {
  return Status::corruption(std::string("hist-window stream ") + stream + ": truncated or overlong varint at row " + std::to_string(row));
}

// Why a row's slots failed to decode (and the count at fault); turned into a Status off the
// row loop.
enum class SlotError : uint8_t { kNone, kTruncated, kCountTooLarge, kZeroEdge, kImpliedRange };
struct SlotFault {
  SlotError error = SlotError::kNone;
  uint64_t count = 0;
};

// Reads the slots first..last of one row from stream D into its mode and, with kStore, its
// buckets. `skip` is the implied slot (INT64_MIN: none), whose count is `total` less the
// others'. Checks that counts fit 32 bits and the window's edges are non-zero.
template <bool kStore>
[[gnu::always_inline]] inline SlotFault decodeSlots(VarintCursor& d, int64_t first, int64_t last, int64_t skip, int64_t total,
                                                    std::vector<Bucket>* buckets, int32_t* mode_out) {
  if (first == last) {
    // One slot (most kernels: their launches in one bucket): its count is the row's total
    // or the one value in stream D.
    uint64_t c = 0;
    if (skip == first) {  // (a one-slot window's implied slot is always that slot)
      if (total <= 0 || total > UINT32_MAX) [[unlikely]] return {total == 0 ? SlotError::kZeroEdge : SlotError::kImpliedRange};
      c = static_cast<uint64_t>(total);
    } else {
      if (!d.next(&c)) [[unlikely]] return {SlotError::kTruncated};
      if (c > UINT32_MAX) [[unlikely]] return {SlotError::kCountTooLarge, c};
      if (c == 0) [[unlikely]] return {SlotError::kZeroEdge};
    }
    if constexpr (kStore) buckets->push_back(Bucket{static_cast<int32_t>(first), static_cast<uint32_t>(c)});  // (refill cleared it)
    *mode_out = static_cast<int32_t>(first);
    return {};
  }
  uint64_t sum = 0;
  uint32_t best = 0;
  int32_t mode = 0;
  Bucket* out = nullptr;
  Bucket* implied = nullptr;
  if constexpr (kStore) {
    buckets->resize(static_cast<size_t>(last - first + 1));
    out = buckets->data();
  }
  for (int64_t ix = first; ix <= last; ++ix) {
    if (ix == skip) {
      if constexpr (kStore) implied = out++;
      continue;
    }
    uint64_t c = 0;
    if (!d.next(&c)) [[unlikely]] return {SlotError::kTruncated};
    if (c > UINT32_MAX) [[unlikely]] return {SlotError::kCountTooLarge, c};
    if (c == 0) {
      if (ix == first || ix == last) [[unlikely]] return {SlotError::kZeroEdge};
      continue;
    }
    sum += c;
    if constexpr (kStore) *out++ = Bucket{static_cast<int32_t>(ix), static_cast<uint32_t>(c)};
    if (c > best) {
      best = static_cast<uint32_t>(c);
      mode = static_cast<int32_t>(ix);
    }
  }
  if (skip != INT64_MIN) {
    if (total < 0 || static_cast<uint64_t>(total) < sum || static_cast<uint64_t>(total) - sum > UINT32_MAX) [[unlikely]] {
      return {SlotError::kImpliedRange};
    }
    const uint64_t c = static_cast<uint64_t>(total) - sum;
    if (c == 0 && (skip == first || skip == last)) [[unlikely]] return {SlotError::kZeroEdge};
    // The mode is the lowest index of the largest count: the implied slot wins a tie only
    // from below.
    if (c > best || (c == best && skip < mode)) mode = static_cast<int32_t>(skip);
    if constexpr (kStore) {
      if (c > 0) {
        *implied = Bucket{static_cast<int32_t>(skip), static_cast<uint32_t>(c)};
      } else {
        // An empty implied slot inside the window: close the gap it left.
        std::copy(implied + 1, out, implied);
        --out;
      }
    }
  }
  if constexpr (kStore) buckets->resize(static_cast<size_t>(out - buckets->data()));
  *mode_out = mode;
  return {};
}

Status slotStatus(SlotFault f, size_t row) {
  switch (f.error) {
    case SlotError::kTruncated: return truncatedStream("D", row);
    case SlotError::kCountTooLarge: return Status::corruption("hist-window: bucket count " + std::to_string(f.count) + " above 2^32-1");
    case SlotError::kZeroEdge: return Status::corruption("hist-window: window edge with a zero count");
    case SlotError::kImpliedRange: return Status::corruption("hist-window: implied count out of range");
    case SlotError::kNone: break;
  }
  return Status::ok();
}

// Where encodeWindowRows puts a row's window deltas: varint streams A and B, or packed.
struct VarintDeltaSink {
  VarintWriter a, b;
  void width(uint32_t, int64_t delta) { a.zz(delta); }
  void first(int64_t delta) { b.zz(delta); }
};
struct PackedDeltaSink {
  PackedDeltasWriter& w;
  void width(uint32_t group, int64_t delta) { w.width(group, zigzagEncode(delta)); }
  void first(int64_t delta) { w.first(zigzagEncode(delta)); }
};

// Rows [from, to) into the deltas and stream d, each row against the previous histogram of
// its group in the range (a range's first row of a group has none).
template <typename DeltaSink>
void encodeWindowRows(std::span<const HistRow> rows, const Bucket* const flat_buckets, const uint32_t* const ids, std::vector<int64_t>& prev,
                      bool implied, size_t from, size_t to, DeltaSink& deltas, VarintWriter& d) {
  std::fill(prev.begin(), prev.end(), -1);
  // A loop-invariant pointer in a local: the byte stores below may alias anything in
  // memory, which would otherwise make the compiler reload it after every store.
  int64_t* const prev_of = prev.data();
  for (size_t i = from; i < to; ++i) {
    const HistRow& row = rows[i];
    int64_t ref_first = 0, ref_width = 0;
    const int32_t* ref_mode = nullptr;
    if (ids != nullptr) {
      int64_t& p = prev_of[ids[i]];
      if (p >= 0) {
        const HistRow& r = rows[static_cast<size_t>(p)];
        if (r.buckets > 0) {
          ref_first = r.first;
          ref_width = static_cast<int64_t>(r.last) - r.first + 1;
          ref_mode = &r.mode;
        }
      }
      p = static_cast<int64_t>(i);
    }
    int64_t width = row.buckets == 0 ? 0 : static_cast<int64_t>(row.last) - row.first + 1;
    deltas.width(ids != nullptr ? ids[i] : 0, width - ref_width);
    if (width == 0) continue;
    deltas.first(row.first - ref_first);
    int64_t skip = implied ? impliedSlot(ref_mode, row.first, row.last) : INT64_MIN;
    // Slots first..last: each bucket's count, a zero byte for each empty slot between.
    char* p = d.reserve(static_cast<size_t>(width) + 5 * row.buckets);
    int64_t ix = row.first;
    for (const Bucket *x = flat_buckets + row.begin, *end = x + row.buckets; x != end; ++x) {
      for (; ix < x->index; ++ix) {
        if (ix != skip) *p++ = 0;
      }
      if (ix != skip) p = putVarint(p, x->count);
      ++ix;
    }
    d.commit(p);
  }
}

}  // namespace

void summarizeHists(std::span<const DurationHistogram> values, std::vector<HistRow>* rows, std::vector<Bucket>* buckets) {
  rows->resize(values.size());
  buckets->clear();
  // Each row's buckets are a heap block of their own: fetch a few rows ahead.
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i + kAhead < values.size()) __builtin_prefetch(values[i + kAhead].buckets().data());
    const auto& h = values[i].buckets();
    HistRow& row = (*rows)[i];
    row = HistRow{};
    row.begin = buckets->size();
    if (h.empty()) continue;
    row.first = h.front().index;
    row.last = h.back().index;
    row.mode = modeOf(h);
    row.buckets = static_cast<uint32_t>(h.size());
    for (const Bucket& b : h) row.count += b.count;
    row.prediction = histPrediction(values[i]);
    buckets->insert(buckets->end(), h.begin(), h.end());
  }
}

size_t histWindowSegmentRows(uint32_t groups) { return std::max(kHistWindowMinSegmentRows, size_t{kHistWindowSegmentSteps} * groups); }

namespace {

// The histograms' rows and buckets, and the flags every layout of them shares.
struct WindowInput {
  std::span<const HistRow> rows;
  std::span<const Bucket> flat;
  const uint32_t* ids = nullptr;
  uint32_t groups = 0;
  uint8_t flags = 0;
  size_t per_segment = 0;
};

// Appends the chunk coded with `flags` (input.flags plus kHistWindowSegments and
// kHistWindowPacked as asked).
void writeHistWindow(const WindowInput& input, uint8_t flags, std::string* out) {
  const size_t n = input.rows.size();
  // Streams and the group table are per-thread scratch: sealing reuses their capacity.
  thread_local std::string sa, sb, sd, joined;
  thread_local std::vector<int64_t> prev;  // row index of the group's previous histogram, -1 none
  thread_local PackedDeltasWriter packed;
  prev.resize(input.groups);
  ByteWriter w(out);
  w.putU8(flags);
  const size_t segments = (flags & kHistWindowSegments) ? (n + input.per_segment - 1) / input.per_segment : 1;
  if (flags & kHistWindowSegments) w.putVarint(segments);
  for (size_t k = 0; k < segments; ++k) {
    const size_t from = k * input.per_segment, to = std::min(n, from + input.per_segment);
    sd.clear();
    VarintWriter d(&sd);
    if (flags & kHistWindowPacked) {
      packed.clear();
      PackedDeltaSink sink{packed};
      encodeWindowRows(input.rows, input.flat.data(), input.ids, prev, flags & kHistWindowImplied, from, to, sink, d);
      d.finish();
      joined.clear();
      packed.finish(&joined);
      w.putVarint(to - from);
      w.putString(joined);  // never zstd'ed: reading it without a frame to set up is the point
      putStream(w, sd);
      continue;
    }
    sa.clear();
    sb.clear();
    VarintDeltaSink sink{VarintWriter(&sa), VarintWriter(&sb)};
    encodeWindowRows(input.rows, input.flat.data(), input.ids, prev, flags & kHistWindowImplied, from, to, sink, d);
    sink.a.finish();
    sink.b.finish();
    d.finish();
    if (!(flags & kHistWindowSegments)) {
      putStream(w, sa);
      putStream(w, sb);
      putStream(w, sd);
      continue;
    }
    // A segment's streams A and B back to back in one stream: a byte or so a row each, too
    // short to pay for a frame of their own. Stream D stays apart (counts compress worse
    // under one set of zstd tables with the deltas: kernels.hist +4% in store_size_test).
    joined.assign(sa).append(sb);
    w.putVarint(to - from);
    w.putVarint(sa.size());
    putStream(w, joined);
    putStream(w, sd);
  }
}

}  // namespace

bool encodeHistWindow(std::span<const DurationHistogram> values, const RowContext* ctx, std::string* out, HistDeltaForm form,
                      HistDeltaForm* chosen) {
  WindowInput input;
  thread_local std::vector<HistRow> own_rows;
  thread_local std::vector<Bucket> own_buckets;
  if (ctx != nullptr && ctx->hist_rows.size() == values.size()) {
    input.rows = ctx->hist_rows;
    input.flat = ctx->hist_buckets;
  } else {
    summarizeHists(values, &own_rows, &own_buckets);
    input.rows = own_rows;
    input.flat = own_buckets;
  }
  if (ctx != nullptr && ctx->ids.size() == values.size() && ctx->count > 0) {
    input.flags |= kHistWindowGrouped;
    input.ids = ctx->ids.data();
    input.groups = ctx->count;
  }
  if (ctx != nullptr && ctx->counts.size() == values.size()) {
    bool consistent = true;
    for (size_t i = 0; i < values.size() && consistent; ++i) {
      consistent = ctx->counts[i] >= 0 && input.rows[i].count == static_cast<uint64_t>(ctx->counts[i]);
    }
    if (consistent) input.flags |= kHistWindowImplied;
  }
  input.per_segment = histWindowSegmentRows(input.groups);
  const uint8_t varint_flags = input.flags | (values.size() > input.per_segment ? kHistWindowSegments : 0);
  // A segment holds at least one row: no rows, no packed form.
  if (values.empty() || form == HistDeltaForm::kVarints) {
    writeHistWindow(input, varint_flags, out);
    if (chosen != nullptr) *chosen = HistDeltaForm::kVarints;
    return true;
  }
  const size_t at = out->size();
  writeHistWindow(input, input.flags | kHistWindowSegments | kHistWindowPacked, out);
  if (chosen != nullptr) *chosen = HistDeltaForm::kPacked;
  if (form == HistDeltaForm::kPacked) return true;
  // Both forms: the packed one unless the varints under zstd are smaller by an eighth and
  // 64 bytes (a reader pays a zstd frame's setup on every read).
  const size_t packed_bytes = out->size() - at;
  thread_local std::string varints;
  varints.clear();
  writeHistWindow(input, varint_flags, &varints);
  if (varints.size() + std::max<size_t>(packed_bytes / 8, 64) <= packed_bytes) {
    out->resize(at);
    out->append(varints);
    if (chosen != nullptr) *chosen = HistDeltaForm::kVarints;
  }
  return true;
}

EncodedPayload encodeHists(std::span<const DurationHistogram> values, const RowContext* ctx, CodecHint* hint) {
  EncodedPayload best;
  best.codec = static_cast<uint8_t>(CodecId::kHistWindow);
  const bool reuse = hint != nullptr && hint->codec == best.codec && hint->reuse_left > 0;
  HistDeltaForm form = HistDeltaForm::kEither;
  encodeHistWindow(values, ctx, &best.bytes, reuse ? static_cast<HistDeltaForm>(hint->variant) : HistDeltaForm::kEither, &form);
  if (reuse) {
    --hint->reuse_left;
    return best;
  }
  // Dense windows waste bytes on sparse histograms (far-apart buckets): then also try the
  // sparse form and keep the smaller.
  uint64_t slots = 0, buckets = 0;
  if (ctx != nullptr && ctx->hist_rows.size() == values.size()) {
    for (const HistRow& r : ctx->hist_rows) {
      buckets += r.buckets;
      if (r.buckets > 0) slots += static_cast<uint64_t>(static_cast<int64_t>(r.last) - r.first + 1);
    }
  } else {
    for (const auto& h : values) {
      if (h.empty()) continue;
      buckets += h.buckets().size();
      slots += static_cast<uint64_t>(static_cast<int64_t>(h.buckets().back().index) - h.buckets().front().index + 1);
    }
  }
  if (slots > 2 * buckets + values.size()) {
    EncodedPayload sparse;
    CodecId c = (ctx != nullptr && ctx->ids.size() == values.size() && ctx->count > 0) ? CodecId::kHistSparseGrouped : CodecId::kHistSparse;
    sparse.codec = static_cast<uint8_t>(c);
    encodeHistsWith(c, values, ctx, &sparse.bytes);
    applyZstdIfSmaller(&sparse);
    if (sparse.bytes.size() < best.bytes.size()) best = std::move(sparse);
  }
  if (hint != nullptr && values.size() >= kCodecHintMinValues) {
    hint->codec = best.codec;
    hint->variant = static_cast<uint8_t>(form);
    hint->reuse_left = kCodecHintReuse;
  }
  return best;
}

namespace {

// What a row needs of its group's previous histogram: its window and mode.
struct WindowRef {
  int32_t first = 0, width = 0, mode = 0;
};

// A row's window deltas as varints, in streams A (widths) and B (first buckets).
struct VarintDeltas {
  VarintCursor a, b;
  bool width(uint32_t, uint64_t* zz) { return a.next(zz); }
  bool first(uint64_t* zz) { return b.next(zz); }
  bool atEnd() const { return a.atEnd() && b.atEnd(); }
};

Status deltaFault(const VarintDeltas&, const char* what, size_t row) {
  return truncatedStream(what[0] == 'w' ? "A" : "B", row);
}
Status deltaFault(const PackedDeltasReader&, const char* what, size_t row) {
  return Status::corruption(std::string("hist-window packed deltas: ") + what + " of row " + std::to_string(row) +
                            " past the stream's bits, its group's widths or its exceptions");
}

// A window's width or first bucket (its group's reference plus the row's delta) past
// [0, max]: named with its value, or with its terms where their sum overflows.
Status badWindow(size_t row, const char* what, int64_t base, int64_t delta, uint64_t max) {
  int64_t value = 0;
  std::string shown = __builtin_add_overflow(base, delta, &value) ? std::to_string(base) + " + " + std::to_string(delta) : std::to_string(value);
  return Status::corruption("hist-window: row " + std::to_string(row) + " " + what + " " + shown + " out of range [0, " + std::to_string(max) + "]");
}

// Rows [from, to) of a hist-window payload: with kStore into *out, else only chained
// through (window and mode into the group's reference, the counts checked, no buckets).
// The flags are template arguments: per row, a test of each cost more than the row's own
// work on one-slot kernels.
template <bool kGrouped, bool kImplied, bool kStore, typename Deltas>
Status decodeWindowRows(size_t from, size_t to, Deltas& deltas, VarintCursor& d, const RowContext* ctx, WindowRef* refs, HistColumn* out) {
  const uint32_t* const ids = kGrouped ? ctx->ids.data() : nullptr;
  const uint32_t groups = kGrouped ? ctx->count : 0;
  const int64_t* const counts = kImplied ? ctx->counts.data() : nullptr;
  constexpr uint64_t kSlots = model::DurationHistogram::kMaxIndex + 1;
  for (size_t i = from; i < to; ++i) {
    WindowRef ref;
    WindowRef* own = nullptr;
    if constexpr (kGrouped) {
      if (ids[i] >= groups) [[unlikely]] return Status::corruption("hist-window: group id out of range");
      own = &refs[ids[i]];
      ref = *own;
    }
    // Unsigned sums: one compare rejects a negative window and a delta past int64 alike.
    uint64_t zw = 0;
    if (!deltas.width(kGrouped ? ids[i] : 0, &zw)) [[unlikely]] return deltaFault(deltas, "window width", i);
    const uint64_t width = static_cast<uint64_t>(ref.width) + static_cast<uint64_t>(zigzagDecode(zw));
    if (width > kSlots) [[unlikely]] return badWindow(i, "window width", ref.width, zigzagDecode(zw), kSlots);
    if (width == 0) {
      if constexpr (kImplied) {
        if (counts[i] != 0) [[unlikely]] return Status::corruption("hist-window: empty histogram with a non-zero count");
      }
      if constexpr (kStore) (*out)[i].clear();
      if constexpr (kGrouped) *own = WindowRef{};
      continue;
    }
    uint64_t zf = 0;
    if (!deltas.first(&zf)) [[unlikely]] return deltaFault(deltas, "first bucket", i);
    const uint64_t first = static_cast<uint64_t>(ref.first) + static_cast<uint64_t>(zigzagDecode(zf));
    if (first > kSlots - width) [[unlikely]] return badWindow(i, "first bucket", ref.first, zigzagDecode(zf), kSlots - width);
    const int64_t lo = static_cast<int64_t>(first), hi = static_cast<int64_t>(first + width - 1);
    int64_t skip = INT64_MIN, total = 0;
    if constexpr (kImplied) {
      skip = impliedSlot(ref.width > 0 ? &ref.mode : nullptr, lo, hi);
      total = counts[i];
    }
    int32_t mode = 0;
    SlotFault e;
    if constexpr (kStore) {
      // Straight into the row's histogram (refill: no copy, no second validation).
      (*out)[i].refill([&](std::vector<Bucket>& buckets) {
        e = decodeSlots<true>(d, lo, hi, skip, total, &buckets, &mode);
        return e.error == SlotError::kNone;
      });
    } else {
      e = decodeSlots<false>(d, lo, hi, skip, total, nullptr, &mode);
    }
    // The context only on failure: built for every row, its text cost 5% of a histogram scan.
    if (e.error != SlotError::kNone) [[unlikely]] return slotStatus(e, i).withContext("hist-window row " + std::to_string(i));
    if constexpr (kGrouped) *own = WindowRef{static_cast<int32_t>(lo), static_cast<int32_t>(width), mode};
  }
  return Status::ok();
}

// Rows of a segment starting at `from`: those before the wanted ones are decoded only as
// far as the next row of their group needs (window and mode, no buckets); rows past them
// not at all. The chunk's checksum has vouched for the bytes left unread.
template <bool kGrouped, bool kImplied, typename Deltas>
Status decodeWindowRows(size_t from, size_t wanted_begin, size_t wanted_end, Deltas& deltas, VarintCursor& d, const RowContext* ctx,
                        WindowRef* refs, HistColumn* out) {
  ARGUS_RETURN_IF_ERROR((decodeWindowRows<kGrouped, kImplied, false>(from, wanted_begin, deltas, d, ctx, refs, out)));
  return decodeWindowRows<kGrouped, kImplied, true>(wanted_begin, wanted_end, deltas, d, ctx, refs, out);
}

}  // namespace

Status decodeHistWindow(std::string_view payload, size_t rows, const RowContext* ctx, HistColumn* out) {
  if (rows > kMaxChunkRows) return Status::corruption("row count " + std::to_string(rows) + " exceeds limit");
  ByteReader r(payload, "hist-window payload");
  uint8_t flags = 0;
  ARGUS_RETURN_IF_ERROR(r.getU8(&flags));
  if (flags & ~(kHistWindowGrouped | kHistWindowImplied | kHistWindowSegments | kHistWindowPacked)) {
    return Status::corruption("hist-window: unknown flags " + std::to_string(flags));
  }
  const bool grouped = flags & kHistWindowGrouped, implied = flags & kHistWindowImplied, packed = flags & kHistWindowPacked;
  if (packed && !(flags & kHistWindowSegments)) return Status::corruption("hist-window: packed deltas without segments");
  if (grouped && (ctx == nullptr || ctx->ids.size() != rows)) return Status::corruption("hist-window without matching row groups");
  if (implied && (ctx == nullptr || ctx->counts.size() != rows)) return Status::corruption("hist-window without the count column");
  // Per thread: a scan decodes a histogram chunk per rank-block, and fresh buffers were an
  // allocation and a zero-fill of each compressed stream's size every time.
  thread_local std::string sa_buf, sb_buf, sd_buf;  // segments: A and B (or packed) in sa_buf
  thread_local std::vector<WindowRef> refs;
  thread_local PackedDeltasReader packed_reader;
  struct ReleaseLarge {  // a hostile or huge chunk's buffers are not kept past the call
    ~ReleaseLarge() {
      for (std::string* b : {&sa_buf, &sb_buf, &sd_buf}) {
        if (b->capacity() > (size_t{1} << 20)) std::string().swap(*b);
      }
      if (refs.capacity() > (size_t{1} << 16)) std::vector<WindowRef>().swap(refs);
      if (packed_reader.heldBytes() > (size_t{1} << 20)) packed_reader = PackedDeltasReader();
    }
  } release_large;

  // The wanted rows are refilled (or cleared, when empty) as they decode; the others empty.
  const size_t wanted_end = ctx != nullptr ? std::min(ctx->wanted_end, rows) : rows;
  const size_t wanted_begin = ctx != nullptr ? std::min(ctx->wanted_begin, wanted_end) : 0;
  out->resizeForRefill(rows);
  for (size_t i = 0; i < wanted_begin; ++i) (*out)[i].clear();
  for (size_t i = wanted_end; i < rows; ++i) (*out)[i].clear();
  // Rows [begin, end), coded alone in their deltas and stream D: the wanted ones among them.
  auto decodeSegment = [&]<typename Deltas>(size_t begin, size_t end, Deltas& deltas, std::string_view vd) -> Status {
    // Unchecked cursors: a bucket count per slot through ByteReader's Status was a third of
    // a histogram scan's time.
    VarintCursor d(vd);
    if (grouped) refs.assign(ctx->count, WindowRef{});
    auto decode = grouped ? (implied ? decodeWindowRows<true, true, Deltas> : decodeWindowRows<true, false, Deltas>)
                          : (implied ? decodeWindowRows<false, true, Deltas> : decodeWindowRows<false, false, Deltas>);
    const size_t stored_end = std::clamp(wanted_end, begin, end);
    ARGUS_RETURN_IF_ERROR(decode(begin, std::clamp(wanted_begin, begin, stored_end), stored_end, deltas, d, ctx, refs.data(), out));
    if (stored_end == end && (!deltas.atEnd() || !d.atEnd())) return Status::corruption("hist-window: trailing bytes in a stream");
    return Status::ok();
  };
  // Varint deltas: a row costs at least one byte of stream A; windows are bounded by stream
  // D's bytes either way.
  constexpr size_t kMaxStreamD = 256u << 20;
  if (!(flags & kHistWindowSegments)) {
    std::string_view va, vb, vd;
    ARGUS_RETURN_IF_ERROR(getStream(r, rows * 10 + 16, &sa_buf, &va));
    ARGUS_RETURN_IF_ERROR(getStream(r, rows * 10 + 16, &sb_buf, &vb));
    ARGUS_RETURN_IF_ERROR(getStream(r, kMaxStreamD, &sd_buf, &vd));
    VarintDeltas deltas{VarintCursor(va), VarintCursor(vb)};
    ARGUS_RETURN_IF_ERROR(decodeSegment(0, rows, deltas, vd));
  } else {
    uint64_t segments = 0;
    ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&segments, std::max<size_t>(rows, 1), "segment count"));
    size_t begin = 0;
    for (uint64_t k = 0; k < segments; ++k) {
      uint64_t n = 0, len_a = 0;
      ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&n, rows - begin, "segment rows"));
      if (n == 0) return Status::corruption("hist-window: segment " + std::to_string(k) + " holds no rows");
      if (!packed) ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&len_a, n * 10, "segment stream A length"));
      const size_t end = begin + n;
      // Streams A and B: 10 bytes a row each at most; packed, a group's widths byte and up
      // to 30 bits a row plus two exceptions of 10 bytes.
      const size_t max_ab = packed ? n * 26 + 48 : n * 20 + 32;
      std::string_view ab, vd;
      if (packed) ARGUS_RETURN_IF_ERROR(getPacked(r, max_ab, &ab));
      if (end > wanted_begin && begin < wanted_end) {
        if (!packed) ARGUS_RETURN_IF_ERROR(getStream(r, max_ab, &sa_buf, &ab));
        ARGUS_RETURN_IF_ERROR(getStream(r, kMaxStreamD, &sd_buf, &vd));
        if (packed) {
          ARGUS_RETURN_IF_ERROR(packed_reader.open(ab, grouped ? ctx->count : 1));
          ARGUS_RETURN_IF_ERROR(decodeSegment(begin, end, packed_reader, vd));
        } else {
          if (len_a > ab.size()) {
            return Status::corruption("hist-window: segment " + std::to_string(k) + " stream A (" + std::to_string(len_a) + " bytes) longer than streams A and B (" +
                                      std::to_string(ab.size()) + ")");
          }
          VarintDeltas deltas{VarintCursor(ab.substr(0, len_a)), VarintCursor(ab.substr(len_a))};
          ARGUS_RETURN_IF_ERROR(decodeSegment(begin, end, deltas, vd));
        }
      } else {  // past streams A|B and D, not inflated
        uint64_t raw_len = 0;
        std::string_view stored;
        if (!packed) ARGUS_RETURN_IF_ERROR(readStream(r, max_ab, &raw_len, &stored));
        ARGUS_RETURN_IF_ERROR(readStream(r, kMaxStreamD, &raw_len, &stored));
      }
      begin = end;
    }
    if (begin != rows) return Status::corruption("hist-window: segments hold " + std::to_string(begin) + " of " + std::to_string(rows) + " rows");
  }
  if (!r.atEnd()) return Status::corruption("hist-window: trailing bytes");
  return Status::ok();
}

Status decodeHists(uint8_t codec_byte, std::string_view payload, size_t rows, const RowContext* groups,
                   HistColumn* out) {
  auto codec = static_cast<CodecId>(codec_byte & kCodecIdMask);
  if (codec == CodecId::kHistWindow && !(codec_byte & kCodecZstdFlag)) return decodeHistWindow(payload, rows, groups, out);
  bool grouped = codec == CodecId::kHistSparseGrouped;
  if (codec != CodecId::kHistSparse && !grouped) {
    return Status::corruption("codec " + std::to_string(codec_byte) + " is not a histogram codec");
  }
  if (rows > kMaxChunkRows) return Status::corruption("row count " + std::to_string(rows) + " exceeds limit");
  if (grouped && (groups == nullptr || groups->ids.size() != rows)) {
    return Status::corruption("hist-sparse-grouped without matching row groups");
  }
  std::string scratch;
  std::string_view raw;
  ARGUS_RETURN_IF_ERROR(unwrapZstd(codec_byte, payload, 256u << 20, &scratch, &raw));
  ByteReader head(raw, "hist-sparse payload");
  uint64_t la = 0, lb = 0, lc = 0;
  ARGUS_RETURN_IF_ERROR(head.getBoundedVarint(&la, raw.size(), "stream A length"));
  ARGUS_RETURN_IF_ERROR(head.getBoundedVarint(&lb, raw.size(), "stream B length"));
  ARGUS_RETURN_IF_ERROR(head.getBoundedVarint(&lc, raw.size(), "stream C length"));
  std::string_view va, vb, vc, vd;
  ARGUS_RETURN_IF_ERROR(head.getBytes(la, &va));
  ARGUS_RETURN_IF_ERROR(head.getBytes(lb, &vb));
  ARGUS_RETURN_IF_ERROR(head.getBytes(lc, &vc));
  ARGUS_RETURN_IF_ERROR(head.getBytes(head.remaining(), &vd));
  ByteReader a(va, "hist-sparse stream A"), b(vb, "hist-sparse stream B"), c(vc, "hist-sparse stream C"), d(vd, "hist-sparse stream D");

  out->clear();
  out->resize(rows);
  std::vector<int64_t> prev_of_group;  // row index of the group's previous histogram, -1 none
  if (grouped) prev_of_group.assign(groups->count, -1);
  static const std::vector<Bucket> kEmpty;
  std::vector<Bucket> buckets;
  for (size_t i = 0; i < rows; ++i) {
    const std::vector<Bucket>* ref = &kEmpty;
    int64_t* slot = nullptr;
    if (grouped) {
      uint32_t g = groups->ids[i];
      if (g >= groups->count) return Status::corruption("hist-sparse-grouped: group id out of range");
      slot = &prev_of_group[g];
      if (*slot >= 0) ref = &(*out)[static_cast<size_t>(*slot)].buckets();
    }
    int64_t dn = 0;
    ARGUS_RETURN_IF_ERROR(a.getSignedVarint(&dn));
    int64_t n = 0;
    if (!addDelta(static_cast<int64_t>(ref->size()), dn, &n)) return outOfRange("hist-sparse: buckets in a row");
    // Every bucket costs at least one byte of stream D: a cheap bound on hostile counts.
    if (n < 0 || static_cast<uint64_t>(n) > d.remaining()) {
      return Status::corruption("hist-sparse: row " + std::to_string(i) + " bucket count " + std::to_string(n) + " out of range");
    }
    buckets.clear();
    if (n > 0) {
      int64_t first = 0;
      ARGUS_RETURN_IF_ERROR(b.getSignedVarint(&first));
      int64_t index = 0;
      if (!addDelta(ref->empty() ? 0 : (*ref)[0].index, first, &index)) return outOfRange("hist-sparse: bucket index");
      size_t pos = 0;
      for (int64_t k = 0; k < n; ++k) {
        if (k > 0) {
          uint64_t gap = 0;
          ARGUS_RETURN_IF_ERROR(c.getBoundedVarint(&gap, UINT32_MAX, "bucket gap"));
          index += static_cast<int64_t>(gap) + 1;
        }
        if (index < INT32_MIN || index > INT32_MAX) return Status::corruption("hist-sparse: bucket index out of range");
        int64_t dc = 0;
        ARGUS_RETURN_IF_ERROR(d.getSignedVarint(&dc));
        int64_t count = 0;
        if (!addDelta(static_cast<int64_t>(refCount(*ref, &pos, static_cast<int32_t>(index))), dc, &count)) return outOfRange("hist-sparse: bucket count");
        if (count <= 0 || count > UINT32_MAX) return Status::corruption("hist-sparse: bucket count out of range");
        buckets.push_back(Bucket{static_cast<int32_t>(index), static_cast<uint32_t>(count)});
      }
    }
    // The context only on failure: built for every row, its text cost 5% of a histogram scan.
    if (Status st = (*out)[i].assignFrom(buckets); !st.isOk()) return st.withContext("hist-sparse row " + std::to_string(i));
    if (slot) *slot = static_cast<int64_t>(i);
  }
  if (!a.atEnd() || !b.atEnd() || !c.atEnd() || !d.atEnd()) return Status::corruption("hist-sparse: trailing bytes");
  return Status::ok();
}

}  // namespace argus::storage
