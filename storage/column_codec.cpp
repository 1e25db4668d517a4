// Integer codecs and the zstd layer: docs/format/codecs.md.
#include "storage/column_codec.h"

#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>
#include <unordered_map>

#include "base/bytes.h"
#include "storage/bitpack_codec.h"
#include "storage/periodic_codec.h"
#include "storage/varint_cursor.h"

namespace argus::storage {
namespace {

using U = uint64_t;

// Collects the distinct values (unordered) into *out; false once there are more than
// `limit` (open addressing, no sort).
bool distinctValues(std::span<const int64_t> v, size_t limit, std::vector<int64_t>* out) {
  size_t cap = 16;
  while (cap < 2 * limit + 2) cap <<= 1;
  std::vector<uint64_t> slots(cap);
  std::vector<uint8_t> used(cap, 0);
  out->clear();
  for (int64_t x : v) {
    uint64_t u = static_cast<uint64_t>(x);
    size_t i = static_cast<size_t>((u * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
    while (used[i] && slots[i] != u) i = (i + 1) & (cap - 1);
    if (!used[i]) {
      if (out->size() >= limit) return false;
      used[i] = 1;
      slots[i] = u;
      out->push_back(x);
    }
  }
  return true;
}

// Value -> its position in a dictionary (open addressing, built once per chunk).
class DictIndex {
 public:
  explicit DictIndex(const std::vector<int64_t>& dict) {
    size_t cap = 16;
    while (cap < 2 * dict.size()) cap <<= 1;
    mask_ = cap - 1;
    slots_.assign(cap, Slot{0, kEmpty});
    for (size_t i = 0; i < dict.size(); ++i) {
      size_t s = slotOf(dict[i]);
      while (slots_[s].index != kEmpty) s = (s + 1) & mask_;
      slots_[s] = Slot{dict[i], static_cast<uint32_t>(i)};
    }
  }
  // REQUIRES: v is in the dictionary.
  size_t find(int64_t v) const {
    size_t s = slotOf(v);
    while (slots_[s].value != v || slots_[s].index == kEmpty) s = (s + 1) & mask_;
    return slots_[s].index;
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    int64_t value;
    uint32_t index;
  };
  size_t slotOf(int64_t v) const { return static_cast<size_t>((static_cast<U>(v) * 0x9E3779B97F4A7C15ull) >> 32) & mask_; }
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

bool allEqual(std::span<const int64_t> v) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i] != v[0]) return false;
  }
  return true;
}

Status trailing(const ByteReader& r, const char* codec) {
  if (!r.atEnd()) {
    return Status::corruption(std::string(codec) + " payload: " + std::to_string(r.remaining()) + " trailing bytes");
  }
  return Status::ok();
}

Status checkGroups(const RowContext* groups, size_t rows) {
  if (groups == nullptr || groups->ids.size() != rows) {
    return Status::corruption("grouped codec without matching row groups (group columns disagree with this chunk's row count)");
  }
  return Status::ok();
}

}  // namespace

namespace {

// 0.99 * gamma^i for every bucket index, in integers. Integer arithmetic makes the
// prediction bit-identical on every machine: a libm difference in exp() must never change
// what a stored residual decodes to. Q32 fixed point, gamma = 1.01/0.99 (model's sketch).
const std::vector<uint64_t>& representativeTable() {
  static const std::vector<uint64_t> table = [] {
    constexpr uint64_t kGammaQ32 = 4381734312ull;    // round(1.01/0.99 * 2^32)
    constexpr uint64_t kMidpointQ32 = 4252017623ull; // round(0.99 * 2^32): 2/(gamma+1)
    std::vector<uint64_t> t(static_cast<size_t>(model::DurationHistogram::kMaxIndex) + 1, 0);
    unsigned __int128 x = kMidpointQ32;
    const unsigned __int128 cap = static_cast<unsigned __int128>(INT64_MAX) << 32;
    for (size_t i = 1; i < t.size(); ++i) {
      x = (x * kGammaQ32) >> 32;
      if (x > cap) x = cap;
      t[i] = static_cast<uint64_t>(x >> 32);
    }
    return t;
  }();
  return table;
}

}  // namespace

int64_t histPrediction(const model::DurationHistogram& h) {
  const auto& table = representativeTable();
  unsigned __int128 sum = 0;
  for (const auto& b : h.buckets()) {
    if (b.index <= 0) continue;
    size_t i = std::min<size_t>(static_cast<size_t>(b.index), table.size() - 1);
    sum += static_cast<unsigned __int128>(table[i]) * b.count;
    if (sum > static_cast<unsigned __int128>(INT64_MAX)) return INT64_MAX;
  }
  return static_cast<int64_t>(sum);
}

const char* codecName(uint8_t codec_byte) {
  bool z = codec_byte & kCodecZstdFlag;
  switch (static_cast<CodecId>(codec_byte & kCodecIdMask)) {
    case CodecId::kPlain: return z ? "plain+zstd" : "plain";
    case CodecId::kConstant: return z ? "constant+zstd" : "constant";
    case CodecId::kDelta: return z ? "delta+zstd" : "delta";
    case CodecId::kDeltaOfDelta: return z ? "delta-of-delta+zstd" : "delta-of-delta";
    case CodecId::kDictionary: return z ? "dictionary+zstd" : "dictionary";
    case CodecId::kGroupDelta: return z ? "group-delta+zstd" : "group-delta";
    case CodecId::kLinear: return z ? "linear+zstd" : "linear";
    case CodecId::kHistResidual: return z ? "hist-residual+zstd" : "hist-residual";
    case CodecId::kSumResidual: return z ? "sum-residual+zstd" : "sum-residual";
    case CodecId::kBitPack: return z ? "bit-pack+zstd" : "bit-pack";
    case CodecId::kPeriodic: return z ? "periodic+zstd" : "periodic";
    case CodecId::kHistWindow: return z ? "hist-window+zstd" : "hist-window";
    case CodecId::kHistSparse: return z ? "hist-sparse+zstd" : "hist-sparse";
    case CodecId::kHistSparseGrouped: return z ? "hist-sparse-grouped+zstd" : "hist-sparse-grouped";
  }
  return "unknown";
}

bool encodeIntsWith(CodecId codec, std::span<const int64_t> values, const RowContext* groups, std::string* out) {
  VarintWriter w(out);
  // Once a codec applies: at most one varint per value plus two header varints (the
  // dictionary reserves for its values itself).
  const size_t bound = 10 * values.size() + 20;
  char* p = nullptr;
  bool applies = true;
  switch (codec) {
    case CodecId::kPlain:
      p = w.reserve(bound);
      for (int64_t v : values) p = putZigzag(p, v);
      break;
    case CodecId::kConstant:
      applies = !values.empty() && allEqual(values);
      if (applies) p = putZigzag(w.reserve(10), values[0]);
      break;
    case CodecId::kDelta: {
      p = w.reserve(bound);
      int64_t prev = 0;
      for (int64_t v : values) {
        p = putZigzag(p, wrapSub(v, prev));
        prev = v;
      }
      break;
    }
    case CodecId::kDeltaOfDelta: {
      p = w.reserve(bound);
      int64_t prev_delta = 0;
      for (size_t i = 0; i < values.size(); ++i) {
        if (i == 0) {
          p = putZigzag(p, values[0]);
          continue;
        }
        int64_t d = wrapSub(values[i], values[i - 1]);
        p = putZigzag(p, i == 1 ? d : wrapSub(d, prev_delta));
        prev_delta = d;
      }
      break;
    }
    case CodecId::kDictionary: {
      // Past a few thousand distinct values a dictionary never wins; skip the work.
      std::vector<int64_t> distinct;
      applies = !values.empty() && distinctValues(values, std::min<size_t>(4096, values.size() / 2 + 1), &distinct);
      if (!applies) break;
      std::sort(distinct.begin(), distinct.end());
      p = w.reserve(10 * distinct.size() + 10 + 10 * values.size());
      p = putVarint(p, distinct.size());
      for (size_t i = 0; i < distinct.size(); ++i) {
        // Sorted ascending as signed values: differences are non-negative (mod 2^64).
        if (i == 0) {
          p = putZigzag(p, distinct[0]);
        } else {
          p = putVarint(p, static_cast<U>(distinct[i]) - static_cast<U>(distinct[i - 1]));
        }
      }
      bool narrow = distinct.size() <= 256;
      DictIndex index(distinct);
      size_t last = 0;
      for (int64_t v : values) {
        // Runs are common (the same value row after row): try the previous index first.
        size_t ix = distinct[last] == v ? last : index.find(v);
        last = ix;
        if (narrow) {
          *p++ = static_cast<char>(ix);
        } else {
          p = putVarint(p, ix);
        }
      }
      break;
    }
    case CodecId::kGroupDelta: {
      applies = groups != nullptr && groups->ids.size() == values.size();
      if (!applies) break;
      p = w.reserve(bound);
      std::vector<int64_t> prev(groups->count, 0);
      const uint32_t* const ids = groups->ids.data();  // a local: stores through p may alias
      for (size_t i = 0; i < values.size(); ++i) {
        int64_t& last = prev[ids[i]];
        p = putZigzag(p, wrapSub(values[i], last));
        last = values[i];
      }
      break;
    }
    case CodecId::kLinear: {
      applies = values.size() >= 2;
      int64_t stride = applies ? wrapSub(values[1], values[0]) : 0;
      for (size_t i = 2; i < values.size() && applies; ++i) applies = wrapSub(values[i], values[i - 1]) == stride;
      if (!applies) break;
      p = putZigzag(w.reserve(20), values[0]);
      p = putZigzag(p, stride);
      break;
    }
    case CodecId::kHistResidual: {
      applies = groups != nullptr && groups->hists.size() == values.size();
      if (!applies) break;
      p = w.reserve(bound);
      if (groups->hist_rows.size() == values.size()) {
        const HistRow* const rows = groups->hist_rows.data();  // a local: stores through p may alias
        for (size_t i = 0; i < values.size(); ++i) p = putZigzag(p, wrapSub(values[i], rows[i].prediction));
      } else {
        for (size_t i = 0; i < values.size(); ++i) p = putZigzag(p, wrapSub(values[i], histPrediction(groups->hists[i])));
      }
      break;
    }
    case CodecId::kSumResidual: {
      applies = groups != nullptr && groups->prediction.size() == values.size();
      if (!applies) break;
      p = w.reserve(bound);
      for (size_t i = 0; i < values.size(); ++i) p = putZigzag(p, wrapSub(values[i], groups->prediction[i]));
      break;
    }
    case CodecId::kBitPack:
      w.finish();
      return encodeBitPack(values, out);
    case CodecId::kPeriodic: {
      PeriodicChoice choice;
      w.finish();
      if (!choosePeriod(values, &choice)) return false;
      encodePeriodic(values, choice.period, out);
      return true;
    }
    case CodecId::kHistSparse:
    case CodecId::kHistSparseGrouped:
    case CodecId::kHistWindow:
      applies = false;
      break;
  }
  if (applies) w.commit(p);
  w.finish();
  return applies;
}

EncodedPayload encodeInts(std::span<const int64_t> values, const RowContext* ctx, CodecHint* hint) {
  EncodedPayload best;
  if (!values.empty() && allEqual(values)) {
    best.codec = static_cast<uint8_t>(CodecId::kConstant);
    encodeIntsWith(CodecId::kConstant, values, ctx, &best.bytes);
    return best;
  }
  {
    std::string linear;
    if (encodeIntsWith(CodecId::kLinear, values, ctx, &linear)) return EncodedPayload{static_cast<uint8_t>(CodecId::kLinear), std::move(linear)};
  }
  if (hint != nullptr && hint->codec != 0 && hint->reuse_left > 0) {
    --hint->reuse_left;
    EncodedPayload p;
    p.codec = hint->codec & kCodecIdMask;
    if (encodeIntsWith(static_cast<CodecId>(p.codec), values, ctx, &p.bytes)) {
      if ((hint->codec & kCodecZstdFlag) && values.size() >= 16) applyZstdIfSmaller(&p);
      return p;
    }
    // The remembered codec does not apply to these values: analyse.
  }
  bool have_hist_rows = ctx != nullptr && ctx->hist_rows.size() == values.size();
  // Analysis: the exact raw size of each candidate, from one pass, without encoding.
  bool grouped = ctx != nullptr && ctx->ids.size() == values.size() && ctx->count > 0;
  bool residual = ctx != nullptr && ctx->hists.size() == values.size();
  bool predicted = ctx != nullptr && ctx->prediction.size() == values.size();
  size_t plain = 0, delta = 0, dod = 0, gdelta = grouped ? 0 : SIZE_MAX, hres = residual ? 0 : SIZE_MAX, sres = predicted ? 0 : SIZE_MAX;
  std::vector<int64_t> prev_in_group(grouped ? ctx->count : 0, 0);
  int64_t prev_delta = 0;
  int64_t lo = values.empty() ? 0 : values[0], hi = lo;
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t v = values[i];
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    plain += zigzagLen(v);
    if (i == 0) {
      delta += zigzagLen(v);
      dod += zigzagLen(v);
    } else {
      int64_t d = wrapSub(v, values[i - 1]);
      delta += zigzagLen(d);
      dod += zigzagLen(i == 1 ? d : wrapSub(d, prev_delta));
      prev_delta = d;
    }
    if (grouped) {
      int64_t& p = prev_in_group[ctx->ids[i]];
      gdelta += zigzagLen(wrapSub(v, p));
      p = v;
    }
    if (residual) hres += zigzagLen(wrapSub(v, have_hist_rows ? ctx->hist_rows[i].prediction : histPrediction(ctx->hists[i])));
    if (predicted) sres += zigzagLen(wrapSub(v, ctx->prediction[i]));
  }
  const int width = bitPackWidth(lo, hi);
  const size_t bitpack = values.empty() || width > kMaxBitPackWidth ? SIZE_MAX : bitPackSize(lo, width, values.size());
  size_t dict = SIZE_MAX;
  std::vector<int64_t> distinct;
  if (distinctValues(values, std::min<size_t>(4096, values.size() / 2 + 1), &distinct)) {
    dict = 10 + distinct.size() * 4 + values.size() * (distinct.size() <= 256 ? 1 : 2);  // estimate
  }
  PeriodicChoice period;
  const size_t periodic = choosePeriod(values, &period) ? period.bytes : SIZE_MAX;
  std::pair<size_t, CodecId> cands[] = {{plain, CodecId::kPlain},         {delta, CodecId::kDelta},           {dod, CodecId::kDeltaOfDelta},
                                        {gdelta, CodecId::kGroupDelta}, {hres, CodecId::kHistResidual}, {dict, CodecId::kDictionary},
                                        {sres, CodecId::kSumResidual},  {bitpack, CodecId::kBitPack},       {periodic, CodecId::kPeriodic}};
  std::sort(std::begin(cands), std::end(cands), [](const auto& a, const auto& b) { return a.first < b.first; });
  // The two smallest raw candidates go through zstd (the ranking can change under zstd:
  // a dictionary's index bytes often compress better than deltas). The smaller raw one
  // stays unless the other saves an eighth of it and 64 bytes: a read costs by the raw
  // bytes (what zstd expands, the values decoded).
  for (int k = 0; k < 2; ++k) {
    if (cands[k].first == SIZE_MAX) break;
    EncodedPayload p;
    p.codec = static_cast<uint8_t>(cands[k].second);
    if (cands[k].second == CodecId::kPeriodic) {
      encodePeriodic(values, period.period, &p.bytes);  // the period the analysis chose
    } else if (!encodeIntsWith(cands[k].second, values, ctx, &p.bytes)) {
      continue;
    }
    if (values.size() >= 16) applyZstdIfSmaller(&p);
    const size_t kept = best.bytes.size(), saving = std::max<size_t>(kept / 8, 64);
    if (best.codec == 0 || p.bytes.size() + saving <= kept) best = std::move(p);
  }
  if (best.codec == 0) {
    best.codec = static_cast<uint8_t>(CodecId::kPlain);
    encodeIntsWith(CodecId::kPlain, values, ctx, &best.bytes);
  }
  if (hint != nullptr && values.size() >= kCodecHintMinValues) {
    hint->codec = best.codec;
    hint->reuse_left = kCodecHintReuse;
  }
  return best;
}

namespace {

// One varint codec's loop, instantiated per codec (and varint length class) so that each
// is a tight loop.
template <CodecId kCodec, bool kLong>
bool decodeVarints(VarintCursor c, const int64_t* prediction, size_t rows, int64_t* o) {
  int64_t prev = 0, delta = 0;
  for (size_t i = 0; i < rows; ++i) {
    int64_t x = 0;
    if (!(kLong ? c.nextSignedLong(&x) : c.nextSigned(&x))) return false;
    if constexpr (kCodec == CodecId::kDelta) {
      prev = i == 0 ? x : wrapAdd(prev, x);
    } else if constexpr (kCodec == CodecId::kDeltaOfDelta) {
      if (i == 0) {
        prev = x;
      } else {
        delta = i == 1 ? x : wrapAdd(delta, x);
        prev = wrapAdd(prev, delta);
      }
    } else if constexpr (kCodec == CodecId::kSumResidual) {
      prev = wrapAdd(prediction[i], x);
    } else {
      prev = x;
    }
    o[i] = prev;
  }
  return c.p == c.end;
}

template <bool kLong>
bool decodeIntsFastAs(CodecId codec, std::string_view raw, size_t rows, const RowContext* groups, std::vector<int64_t>* out) {
  VarintCursor c(raw);
  switch (codec) {
    case CodecId::kPlain: out->resize(rows); return decodeVarints<CodecId::kPlain, kLong>(c, nullptr, rows, out->data());
    case CodecId::kDelta: out->resize(rows); return decodeVarints<CodecId::kDelta, kLong>(c, nullptr, rows, out->data());
    case CodecId::kDeltaOfDelta: out->resize(rows); return decodeVarints<CodecId::kDeltaOfDelta, kLong>(c, nullptr, rows, out->data());
    case CodecId::kSumResidual:
      if (groups == nullptr || groups->prediction.size() != rows) return false;
      out->resize(rows);
      return decodeVarints<CodecId::kSumResidual, kLong>(c, groups->prediction.data(), rows, out->data());
    default: return false;
  }
}

// The plain, delta, delta-of-delta and sum-residual codecs without per-value checks beyond
// the varints'. Returns false (out unspecified) for any other codec or any fault.
bool decodeIntsFast(CodecId codec, std::string_view raw, size_t rows, const RowContext* groups, std::vector<int64_t>* out) {
  // 6+ bytes a value (64-bit signatures, delta-coded: 10) read faster a word at a time.
  if (raw.size() >= 6 * rows) return decodeIntsFastAs<true>(codec, raw, rows, groups, out);
  return decodeIntsFastAs<false>(codec, raw, rows, groups, out);
}

}  // namespace

Status decodeInts(uint8_t codec_byte, std::string_view payload, size_t rows, const RowContext* groups, std::vector<int64_t>* out) {
  if (rows > kMaxChunkRows) return Status::corruption("row count " + std::to_string(rows) + " exceeds limit");
  std::string scratch;
  std::string_view raw;
  // Every codec spends at most 10 bytes per row plus a dictionary of at most 4096 values.
  ARGUS_RETURN_IF_ERROR(unwrapZstd(codec_byte, payload, rows * 10 + 4096 * 10 + 16, &scratch, &raw));
  auto codec = static_cast<CodecId>(codec_byte & kCodecIdMask);
  if (codec == CodecId::kBitPack) {
    return groups == nullptr ? decodeBitPack(raw, rows, out) : decodeBitPack(raw, rows, out, groups->wanted_begin, groups->wanted_end);
  }
  if (codec == CodecId::kPeriodic) return decodePeriodic(raw, rows, out);
  if (decodeIntsFast(codec, raw, rows, groups, out)) return Status::ok();
  ByteReader r(raw, codecName(codec_byte));
  out->clear();
  out->reserve(rows);
  switch (codec) {
    case CodecId::kPlain:
      for (size_t i = 0; i < rows; ++i) {
        int64_t v = 0;
        ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&v));
        out->push_back(v);
      }
      return trailing(r, "plain");
    case CodecId::kConstant: {
      int64_t v = 0;
      ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&v));
      out->assign(rows, v);
      return trailing(r, "constant");
    }
    case CodecId::kDelta: {
      int64_t prev = 0;
      for (size_t i = 0; i < rows; ++i) {
        int64_t d = 0;
        ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&d));
        prev = i == 0 ? d : wrapAdd(prev, d);
        out->push_back(prev);
      }
      return trailing(r, "delta");
    }
    case CodecId::kDeltaOfDelta: {
      int64_t prev = 0, delta = 0;
      for (size_t i = 0; i < rows; ++i) {
        int64_t x = 0;
        ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&x));
        if (i == 0) {
          prev = x;
        } else {
          delta = i == 1 ? x : wrapAdd(delta, x);
          prev = wrapAdd(prev, delta);
        }
        out->push_back(prev);
      }
      return trailing(r, "delta-of-delta");
    }
    case CodecId::kDictionary: {
      uint64_t n = 0;
      ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&n, std::min<uint64_t>(4096, rows), "dictionary size"));
      if (n == 0 && rows > 0) return Status::corruption("dictionary: empty dictionary for " + std::to_string(rows) + " rows");
      std::vector<int64_t> dict;
      dict.reserve(n);
      for (uint64_t i = 0; i < n; ++i) {
        if (i == 0) {
          int64_t v = 0;
          ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&v));
          dict.push_back(v);
        } else {
          uint64_t d = 0;
          ARGUS_RETURN_IF_ERROR(r.getVarint(&d));
          dict.push_back(static_cast<int64_t>(static_cast<U>(dict.back()) + d));
        }
      }
      bool narrow = n <= 256;
      for (size_t i = 0; i < rows; ++i) {
        uint64_t ix = 0;
        if (narrow) {
          uint8_t b = 0;
          ARGUS_RETURN_IF_ERROR(r.getU8(&b));
          ix = b;
        } else {
          ARGUS_RETURN_IF_ERROR(r.getVarint(&ix));
        }
        if (ix >= n) return Status::corruption("dictionary: index " + std::to_string(ix) + " out of range " + std::to_string(n));
        out->push_back(dict[ix]);
      }
      return trailing(r, "dictionary");
    }
    case CodecId::kGroupDelta: {
      ARGUS_RETURN_IF_ERROR(checkGroups(groups, rows));
      std::vector<int64_t> prev(groups->count, 0);
      for (size_t i = 0; i < rows; ++i) {
        uint32_t g = groups->ids[i];
        if (g >= groups->count) return Status::corruption("group-delta: group id out of range");
        int64_t d = 0;
        ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&d));
        prev[g] = wrapAdd(prev[g], d);
        out->push_back(prev[g]);
      }
      return trailing(r, "group-delta");
    }
    case CodecId::kLinear: {
      int64_t first = 0, stride = 0;
      ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&first));
      ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&stride));
      int64_t v = first;
      for (size_t i = 0; i < rows; ++i) {
        out->push_back(v);
        v = wrapAdd(v, stride);
      }
      return trailing(r, "linear");
    }
    case CodecId::kHistResidual: {
      if (groups == nullptr || groups->hists.size() != rows) {
        return Status::corruption("hist-residual without the histograms of its rows");
      }
      for (size_t i = 0; i < rows; ++i) {
        int64_t d = 0;
        ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&d));
        out->push_back(wrapAdd(histPrediction(groups->hists[i]), d));
      }
      return trailing(r, "hist-residual");
    }
    case CodecId::kSumResidual: {
      if (groups == nullptr || groups->prediction.size() != rows) {
        return Status::corruption("sum-residual without its predictor columns");
      }
      for (size_t i = 0; i < rows; ++i) {
        int64_t d = 0;
        ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&d));
        out->push_back(wrapAdd(groups->prediction[i], d));
      }
      return trailing(r, "sum-residual");
    }
    case CodecId::kBitPack:  // decoded above
    case CodecId::kPeriodic:
    case CodecId::kHistSparse:
    case CodecId::kHistSparseGrouped:
    case CodecId::kHistWindow:
      break;
  }
  return Status::corruption(std::string("codec ") + std::to_string(codec_byte) + " is not an integer codec");
}

bool zstdCompress(std::string_view raw, std::string* frame, int level) {
  size_t bound = ZSTD_compressBound(raw.size());
  if (frame->size() < bound) frame->resize(bound);
  // One context per thread: ZSTD_compress would allocate and free one per call. Matches of
  // 7 bytes or more (level 3 takes 4 or 5): a histogram stream of small counts then codes as
  // Huffman literals rather than short matches, each a sequence paid for at decode
  // (docs/format/codecs.md, step 3). A parameter set explicitly outranks the level's, so
  // the match length is set once and only the level per call.
  thread_local std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> cctx = [] {
    std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> c(ZSTD_createCCtx(), ZSTD_freeCCtx);
    ZSTD_CCtx_setParameter(c.get(), ZSTD_c_minMatch, 7);
    return c;
  }();
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, level);
  size_t n = ZSTD_compress2(cctx.get(), frame->data(), frame->size(), raw.data(), raw.size());
  if (ZSTD_isError(n)) return false;
  frame->resize(n);
  return true;
}

bool zstdPays(size_t raw_bytes, size_t stored_bytes) {
  constexpr size_t kSavingThatAlwaysPays = 512, kLeastSaving = 256;
  return stored_bytes + std::max(std::min(raw_bytes / 8, kSavingThatAlwaysPays), kLeastSaving) <= raw_bytes;
}

bool applyZstdIfSmaller(EncodedPayload* p, int level) {
  if (p->bytes.size() < 32) return false;  // the frame header alone eats what it could save
  // Per-thread scratch; p->bytes then takes the result into its own capacity.
  thread_local std::string frame;
  if (!zstdCompress(p->bytes, &frame, level)) return false;
  if (!zstdPays(p->bytes.size(), varintLen(p->bytes.size()) + frame.size())) return false;
  size_t raw_size = p->bytes.size();
  p->bytes.clear();
  ByteWriter(&p->bytes).putVarint(raw_size);
  p->bytes.append(frame);
  p->codec |= kCodecZstdFlag;
  return true;
}

Status unwrapZstd(uint8_t codec_byte, std::string_view payload, size_t max_raw_bytes, std::string* scratch, std::string_view* raw) {
  if (!(codec_byte & kCodecZstdFlag)) {
    *raw = payload;
    return Status::ok();
  }
  ByteReader r(payload, "zstd payload");
  uint64_t raw_size = 0;
  ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&raw_size, max_raw_bytes, "raw size"));
  std::string_view frame;
  ARGUS_RETURN_IF_ERROR(r.getBytes(r.remaining(), &frame));
  return decompressZstd(raw_size, frame, scratch, raw);
}

Status decompressZstd(uint64_t raw_size, std::string_view frame, std::string* scratch, std::string_view* raw) {
  unsigned long long declared = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (declared != raw_size) return Status::corruption("zstd payload: frame size disagrees with the recorded raw size");
  scratch->resize(raw_size);
  thread_local std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> dctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  size_t n = ZSTD_decompressDCtx(dctx.get(), scratch->data(), raw_size, frame.data(), frame.size());
  if (ZSTD_isError(n) || n != raw_size) {
    return Status::corruption(std::string("zstd payload: ") + (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short frame"));
  }
  *raw = std::string_view(scratch->data(), raw_size);
  return Status::ok();
}

}  // namespace argus::storage
