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

#include "base/bytes.h"

namespace argus::storage {
namespace {

using model::DurationHistogram;
using Bucket = DurationHistogram::Bucket;

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

bool encodeHistsWith(CodecId codec, std::span<const DurationHistogram> values, const RowGroups* groups, std::string* out) {
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

EncodedPayload encodeHists(std::span<const DurationHistogram> values, const RowGroups* groups) {
  EncodedPayload best;
  best.codec = static_cast<uint8_t>(CodecId::kHistSparse);
  encodeHistsWith(CodecId::kHistSparse, values, groups, &best.bytes);
  EncodedPayload grouped;
  grouped.codec = static_cast<uint8_t>(CodecId::kHistSparseGrouped);
  if (encodeHistsWith(CodecId::kHistSparseGrouped, values, groups, &grouped.bytes)) {
    // Compare after zstd: the grouped streams are mostly zeros, which zstd loves.
    applyZstdIfSmaller(&best);
    applyZstdIfSmaller(&grouped);
    if (grouped.bytes.size() < best.bytes.size()) return grouped;
    return best;
  }
  applyZstdIfSmaller(&best);
  return best;
}

Status decodeHists(uint8_t codec_byte, std::string_view payload, size_t rows, const RowGroups* groups,
                   std::vector<DurationHistogram>* out) {
  auto codec = static_cast<CodecId>(codec_byte & kCodecIdMask);
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
    int64_t n = static_cast<int64_t>(ref->size()) + dn;
    // Every bucket costs at least one byte of stream D: a cheap bound on hostile counts.
    if (n < 0 || static_cast<uint64_t>(n) > d.remaining()) {
      return Status::corruption("hist-sparse: row " + std::to_string(i) + " bucket count " + std::to_string(n) + " out of range");
    }
    buckets.clear();
    if (n > 0) {
      int64_t first = 0;
      ARGUS_RETURN_IF_ERROR(b.getSignedVarint(&first));
      int64_t index = (ref->empty() ? 0 : (*ref)[0].index) + first;
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
        int64_t count = static_cast<int64_t>(refCount(*ref, &pos, static_cast<int32_t>(index))) + dc;
        if (count <= 0 || count > UINT32_MAX) return Status::corruption("hist-sparse: bucket count out of range");
        buckets.push_back(Bucket{static_cast<int32_t>(index), static_cast<uint32_t>(count)});
      }
    }
    ARGUS_RETURN_IF_ERROR((*out)[i].assign(buckets).withContext("hist-sparse row " + std::to_string(i)));
    if (slot) *slot = static_cast<int64_t>(i);
  }
  if (!a.atEnd() || !b.atEnd() || !c.atEnd() || !d.atEnd()) return Status::corruption("hist-sparse: trailing bytes");
  return Status::ok();
}

}  // namespace argus::storage
