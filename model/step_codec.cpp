// StepEncoder and the standalone helpers. The byte layout is specified in
// docs/wire/step-record.md; keep the two in step. The decoder is in step_decoder.cpp.
//
// Performance contract (bench/step_codec.cpp): no allocation per record in steady state.
// Ids map to dense ids through FlatIndex tables (O(1) clear for keyframes), the previous
// record is kept as flat arrays (History) that swap with the current ones, and the body is
// written through a raw pointer into a buffer that keeps its capacity.
#include <zstd.h>

#include <algorithm>
#include <span>

#include "model/flat_index.h"
#include "model/step_codec.h"
#include "model/step_codec_format.h"

namespace argus::model {

using namespace step_format;  // NOLINT(google-build-using-namespace): the format's own constants
using Bucket = DurationHistogram::Bucket;

// Upper bounds of the bytes one entry can take, reserved before writing it.
namespace {
constexpr size_t kStepFieldsMaxBytes = 2 + 4 * 10 + 3 * 10 + kPhaseColumnCount * 10;
constexpr size_t kListHeaderMaxBytes = 10;
// key (varint + u64 + escape byte), tag, total, histogram first index and size field.
constexpr size_t kKernelFixedMaxBytes = 19 + 10 + 10 + 10 + 10;
// Per bucket of the histogram and of the previous one: the chosen mode is never larger
// than sparse (index or gap <= 2 bytes, count <= 5 bytes).
constexpr size_t kKernelPerBucketMaxBytes = 8;
constexpr size_t kCollectiveMaxBytes = 1 + 10 + 8 + 1 + 5 + 4 * 10;
constexpr size_t kStackMaxBytes = 10 + 8 + 10;
constexpr size_t kEventMaxBytes = 1 + 10 + 10 + 10 + 8;
}  // namespace

struct StepEncoder::State {
  bool has_history = false;
  uint8_t seq = 0;  // records since the keyframe, mod 256
  History prev, cur;
  FlatIndex sig_ids, comm_ids, stack_ids, name_ids;  // 64-bit id -> dense id
  FlatIndex prev_index;  // key -> index of its first entry in prev's list (scratch)
  PodArray<uint64_t> total_misses;  // per kernel: zz(total - prediction) (scratch)
  StepWriter body;
  std::string compressed;
  ZSTD_CCtx* cctx = nullptr;

  ~State() { ZSTD_freeCCtx(cctx); }

  void clear() {
    has_history = false;
    seq = 0;
    sig_ids.clear();
    comm_ids.clear();
    stack_ids.clear();
    name_ids.clear();
    prev.clear();
  }

  void encodeBody(const StepRecord& rec, bool keyframe, bool track);
};

namespace {

// Writes an id reference: varint(dense + 1) << shift_bits | low, or `low` and the full u64
// for a new id. Returns the dense id. REQUIRES: 19 bytes reserved.
uint32_t putId(StepWriter& w, FlatIndex& table, uint64_t id, int shift_bits, uint64_t low) {
  bool inserted = false;
  uint32_t dense = table.findOrInsert({id, 0}, static_cast<uint32_t>(table.size()), &inserted);
  if (inserted) {
    w.varint(low);
    w.fixed64(id);
  } else {
    w.varint(((static_cast<uint64_t>(dense) + 1) << shift_bits) | low);
  }
  return dense;
}

// The edit form of b against a non-empty prev (mode kHistEdit): the buckets of b whose
// index prev lacks (varint n, then the first index against prev's first, later ones as
// gap - 1, each with its count), then for every bucket of prev the change of its count
// (to 0 when b lacks it). Calls emit(varint value) in writing order.
template <typename Emit>
void walkEdit(std::span<const Bucket> b, std::span<const Bucket> prev, Emit&& emit) {
  size_t inserts = 0;
  for (size_t i = 0, j = 0; i < b.size(); ++i) {
    while (j < prev.size() && prev[j].index < b[i].index) ++j;
    if (j == prev.size() || prev[j].index != b[i].index) ++inserts;
  }
  emit(inserts);
  int32_t last = prev.front().index;
  bool first = true;
  for (size_t i = 0, j = 0; i < b.size(); ++i) {
    while (j < prev.size() && prev[j].index < b[i].index) ++j;
    if (j < prev.size() && prev[j].index == b[i].index) continue;
    if (first) {
      emit(zigzagEncode(static_cast<int64_t>(b[i].index) - last));
    } else {
      emit(static_cast<uint64_t>(b[i].index - last - 1));
    }
    emit(b[i].count);
    last = b[i].index;
    first = false;
  }
  for (size_t i = 0, j = 0; j < prev.size(); ++j) {
    while (i < b.size() && b[i].index < prev[j].index) ++i;
    int64_t now = i < b.size() && b[i].index == prev[j].index ? b[i].count : 0;
    emit(zigzagEncode(now - static_cast<int64_t>(prev[j].count)));
  }
}

size_t editBytes(std::span<const Bucket> b, std::span<const Bucket> prev) {
  size_t bytes = 0;
  walkEdit(b, prev, [&](uint64_t v) { bytes += varintSize(v); });
  return bytes;
}

// REQUIRES: kKernelPerBucketMaxBytes per bucket of b and prev + 20 reserved.
void putHist(StepWriter& w, std::span<const Bucket> b, HistMode mode, int32_t ref, std::span<const Bucket> prev) {
  switch (mode) {
    case kHistSame:
      return;
    case kHistSingle:
      w.zz(static_cast<int64_t>(b.front().index) - ref);
      return;
    case kHistEdit:
      walkEdit(b, prev, [&](uint64_t v) { w.varint(v); });
      return;
    case kHistDenseNibble:
    case kHistDenseVarint: {
      int32_t first = b.front().index, last = b.back().index;
      w.zz(static_cast<int64_t>(first) - ref);
      w.varint(static_cast<uint64_t>(last - first));
      if (mode == kHistDenseVarint) {
        int32_t next = first;
        for (const Bucket& x : b) {
          for (; next < x.index; ++next) w.u8(0);
          w.varint(x.count);
          next = x.index + 1;
        }
      } else {
        // Slots first..last, two 4-bit counts per byte, low nibble first, pad nibble 0.
        size_t slot = 0;
        uint8_t byte = 0;
        for (const Bucket& x : b) {
          size_t at = static_cast<size_t>(x.index - first);
          for (; slot < at; ++slot) {  // empty slots
            if (slot & 1) {
              w.u8(byte);
              byte = 0;
            }
          }
          if (slot & 1) {
            w.u8(static_cast<uint8_t>(byte | (x.count << 4)));
            byte = 0;
          } else {
            byte = static_cast<uint8_t>(x.count);
          }
          ++slot;
        }
        if (slot & 1) w.u8(byte);
      }
      return;
    }
    case kHistSparse: {
      w.varint(b.size());
      int32_t prev_index = 0;
      for (size_t j = 0; j < b.size(); ++j) {
        if (j == 0) {
          w.zz(static_cast<int64_t>(b[0].index) - ref);
        } else {
          w.varint(static_cast<uint64_t>(b[j].index - prev_index - 1));
        }
        w.varint(b[j].count);
        prev_index = b[j].index;
      }
      return;
    }
  }
}

struct HistChoice {
  HistMode mode;
  size_t bytes;  // payload bytes (0 for kHistSame)
};

// The cheapest explicit mode for a non-empty histogram, with its payload bytes.
HistChoice chooseExplicit(std::span<const Bucket> b, int32_t ref, uint32_t counts_or) {
  const size_t n = b.size();
  const size_t first_bytes = varintSize(zigzagEncode(static_cast<int64_t>(b.front().index) - ref));
  uint64_t span = static_cast<uint64_t>(b.back().index - b.front().index);
  size_t dense_nibble, dense_varint, sparse;
  if (counts_or <= 15 && span < 128) {
    // The usual shape: every count, gap and the span take one byte.
    dense_nibble = 1 + (span + 2) / 2;
    dense_varint = 1 + span + 1;
    sparse = varintSize(n) + 2 * n - 1;
  } else {
    size_t varint_bytes = 0;
    sparse = varintSize(n);
    int32_t prev = b.front().index;
    for (size_t j = 0; j < n; ++j) {
      size_t c = varintSize(b[j].count);
      varint_bytes += c;
      sparse += c + (j == 0 ? 0 : varintSize(static_cast<uint64_t>(b[j].index - prev - 1)));
      prev = b[j].index;
    }
    dense_varint = varintSize(span) + varint_bytes + (span + 1 - n);
    dense_nibble = counts_or <= 15 ? varintSize(span) + (span + 2) / 2 : SIZE_MAX;
  }
  if (dense_nibble <= dense_varint && dense_nibble <= sparse) return {kHistDenseNibble, first_bytes + dense_nibble};
  return dense_varint <= sparse ? HistChoice{kHistDenseVarint, first_bytes + dense_varint} : HistChoice{kHistSparse, first_bytes + sparse};
}

// Picks the histogram mode of k against prev (ref: the index explicit modes code
// against). With kCopy, also copies k's buckets to copy_to (the history) in the same pass
// that compares them with prev.
template <bool kCopy>
HistMode chooseHist(const KernelStat& k, std::span<const Bucket> prev, int32_t ref, Bucket* copy_to) {
  std::span<const Bucket> b = k.hist.buckets();
  const size_t n = b.size();
  uint32_t counts_or = 0;
  if (n == prev.size()) {
    uint32_t diff = 0;
    for (size_t j = 0; j < n; ++j) {
      const Bucket x = b[j];
      if constexpr (kCopy) copy_to[j] = x;
      counts_or |= x.count;
      diff |= static_cast<uint32_t>(x.index ^ prev[j].index) | (x.count ^ prev[j].count);
    }
    if (diff == 0) return kHistSame;
  } else {
    for (size_t j = 0; j < n; ++j) {
      const Bucket x = b[j];
      if constexpr (kCopy) copy_to[j] = x;
      counts_or |= x.count;
    }
  }
  if (n == 0) return kHistSparse;  // n = 0
  if (n == 1 && b[0].count == k.count) return kHistSingle;
  HistChoice best = chooseExplicit(b, ref, counts_or);
  if (!prev.empty() && editBytes(b, prev) <= best.bytes) return kHistEdit;
  return best.mode;
}

const CollectiveStat kNoCollective{};

}  // namespace

// Writes the body of `rec` into body. With `track`, also records rec into cur (the next
// record's reference).
void StepEncoder::State::encodeBody(const StepRecord& rec, bool keyframe, bool track) {
  StepWriter& w = body;
  w.clear();
  w.reserve(kStepFieldsMaxBytes);

  // Step fields.
  if (keyframe) {
    w.varint(rec.rank);
    w.varint(rec.step);
    w.varint(rec.attempt);
    w.zz(rec.start_ns);
  } else {
    seq = static_cast<uint8_t>(seq + 1);
    w.u8(seq);
    w.u8(static_cast<uint8_t>(prev.step));
    w.varint(zzDelta(rec.rank, prev.rank));
    w.varint(zzDelta(static_cast<int64_t>(rec.step), static_cast<int64_t>(prev.step + 1)));
    w.varint(zzDelta(rec.attempt, prev.attempt));
    w.varint(zzDelta(rec.start_ns, prev.end_ns));
  }
  // end_ns as the step's span, against the previous span (0 in a keyframe).
  int64_t span_ns = subWrap(rec.end_ns, rec.start_ns);
  w.varint(zzDelta(span_ns, subWrap(prev.end_ns, prev.start_ns)));
  w.varint(zzDelta(rec.iter_ns, span_ns));
  w.varint(rec.flags);
  for (int i = 0; i < kPhaseColumnCount; ++i) w.varint(zzDelta(rec.phase_ns[i], prev.phase_ns[i]));

  if (track) cur.clearLists();

  // Kernels.
  {
    const size_t n = rec.kernels.size();
    bool same = !keyframe && n == prev.kernels.size();
    for (size_t i = 0; i < n && same; ++i) {
      same = rec.kernels[i].signature == prev.kernels[i].signature && rec.kernels[i].phase == prev.kernels[i].phase;
    }
    if (!same && !keyframe) {
      prev_index.clear();
      bool inserted;
      for (size_t i = 0; i < prev.kernels.size(); ++i) {
        prev_index.findOrInsert({kernelKey(prev.kernels[i].dense, prev.kernels[i].phase), 0}, static_cast<uint32_t>(i), &inserted);
      }
    }
    w.reserve(kListHeaderMaxBytes);
    w.varint(same ? 0 : n + 1);
    if (track) cur.kernels.resizeUninitialized(n);
    int32_t last_first = 0;  // first index of the last non-empty histogram written
    total_misses.resizeUninitialized(n);
    uint64_t any_miss = 0;
    for (size_t i = 0; i < n; ++i) {
      const KernelStat& k = rec.kernels[i];
      const auto& b = k.hist.buckets();
      w.reserve(kKernelFixedMaxBytes);
      const KernelRef* p = &kNoKernel;
      uint32_t dense;
      if (same) {
        p = &prev.kernels[i];
        dense = p->dense;
      } else {
        uint8_t phase = static_cast<uint8_t>(k.phase);
        uint8_t low = phase < kPhaseEscape ? phase : kPhaseEscape;
        dense = putId(w, sig_ids, k.signature, 3, low);
        if (low == kPhaseEscape) w.u8(phase);
        if (!keyframe) {
          uint32_t j = prev_index.find({kernelKey(dense, k.phase), 0});
          if (j != FlatIndex::kAbsent) p = &prev.kernels[j];
        }
      }
      std::span<const Bucket> prev_hist = prev.hist(*p);
      w.reserve(kKernelFixedMaxBytes + kKernelPerBucketMaxBytes * (b.size() + prev_hist.size()));
      const int32_t ref = prev_hist.empty() ? last_first : prev_hist.front().index;
      HistMode mode = track ? chooseHist<true>(k, prev_hist, ref, cur.setKernelOnly(i, k, dense, 0))
                            : chooseHist<false>(k, prev_hist, ref, nullptr);
      const int64_t sketch_ns = mode == kHistSame ? p->sketch_ns : DurationHistogram::sketchTotal(b);
      if (track) cur.kernels[i].sketch_ns = sketch_ns;
      w.varint(mode | (zzDelta(k.count, p->count) << 3));
      putHist(w, b, mode, ref, prev_hist);
      uint64_t miss = zzDelta(k.total_ns, predictTotalV2(*p, sketch_ns));
      total_misses[i] = miss;
      any_miss |= miss;
      if (!b.empty()) last_first = b.front().index;
    }
    // Totals: none at all when every one equals its prediction (sketch totals).
    w.reserve(1 + (any_miss ? 10 * n : 0));
    w.u8(any_miss ? 1 : 0);
    if (any_miss) {
      for (size_t i = 0; i < n; ++i) w.varint(total_misses[i]);
    }
  }

  // Collectives.
  {
    const size_t n = rec.collectives.size();
    bool same = !keyframe && n == prev.collectives.size();
    for (size_t i = 0; i < n && same; ++i) {
      const auto &a = rec.collectives[i], &b = prev.collectives[i];
      same = a.op == b.op && a.communicator == b.communicator && a.size_class == b.size_class && a.peer_rank == b.peer_rank;
    }
    if (!same && !keyframe) {
      prev_index.clear();
      bool inserted;
      for (size_t i = 0; i < prev.collectives.size(); ++i) {
        const auto& c = prev.collectives[i];
        prev_index.findOrInsert({collectiveKey(c.op, prev.comm_dense[i], c.size_class), c.peer_rank}, static_cast<uint32_t>(i), &inserted);
      }
    }
    w.reserve(kListHeaderMaxBytes);
    w.varint(same ? 0 : n + 1);
    for (size_t i = 0; i < n; ++i) {
      w.reserve(kCollectiveMaxBytes);
      const CollectiveStat& c = rec.collectives[i];
      const CollectiveStat* p = &kNoCollective;
      uint32_t dense;
      if (same) {
        dense = prev.comm_dense[i];
        p = &prev.collectives[i];
      } else {
        w.u8(static_cast<uint8_t>(c.op));
        dense = putId(w, comm_ids, c.communicator, 0, 0);
        w.u8(c.size_class);
        w.varint(static_cast<uint32_t>(c.peer_rank + 1));
        if (!keyframe) {
          uint32_t j = prev_index.find({collectiveKey(c.op, dense, c.size_class), c.peer_rank});
          if (j != FlatIndex::kAbsent) p = &prev.collectives[j];
        }
      }
      w.varint(zzDelta(c.count, p->count));
      w.varint(zzDelta(static_cast<int64_t>(c.bytes), static_cast<int64_t>(p->bytes)));
      w.varint(zzDelta(c.total_ns, p->total_ns));
      w.varint(zzDelta(c.wait_ns, p->wait_ns));
      if (track) {
        cur.collectives.push_back(c);
        cur.comm_dense.push_back(dense);
      }
    }
  }

  // Stacks.
  {
    const size_t n = rec.stacks.size();
    bool same = !keyframe && n == prev.stacks.size();
    for (size_t i = 0; i < n && same; ++i) same = rec.stacks[i].stack_id == prev.stacks[i].stack_id;
    if (!same && !keyframe) {
      prev_index.clear();
      bool inserted;
      for (size_t i = 0; i < prev.stacks.size(); ++i) prev_index.findOrInsert({prev.stack_dense[i], 0}, static_cast<uint32_t>(i), &inserted);
    }
    w.reserve(kListHeaderMaxBytes);
    w.varint(same ? 0 : n + 1);
    for (size_t i = 0; i < n; ++i) {
      w.reserve(kStackMaxBytes);
      const StackStat& st = rec.stacks[i];
      uint32_t base = 0;
      uint32_t dense;
      if (same) {
        dense = prev.stack_dense[i];
        base = prev.stacks[i].samples;
      } else {
        dense = putId(w, stack_ids, st.stack_id, 0, 0);
        if (!keyframe) {
          uint32_t j = prev_index.find({dense, 0});
          if (j != FlatIndex::kAbsent) base = prev.stacks[j].samples;
        }
      }
      w.varint(zzDelta(st.samples, base));
      if (track) {
        cur.stacks.push_back(st);
        cur.stack_dense.push_back(dense);
      }
    }
  }

  // Events.
  {
    w.reserve(kListHeaderMaxBytes);
    w.varint(rec.events.size());
    int64_t ts = rec.start_ns;
    for (const EventRecord& e : rec.events) {
      w.reserve(kEventMaxBytes);
      w.u8(static_cast<uint8_t>(e.kind));
      w.varint(zzDelta(e.ts_ns, ts));
      ts = e.ts_ns;
      w.varint(e.value);
      putId(w, name_ids, e.name_id, 0, 0);
    }
  }
}

StepEncoder::StepEncoder(StepCodecOptions options) : options_(options), state_(std::make_shared<State>()) {}

void StepEncoder::reset() { state_->clear(); }

void StepEncoder::encode(const StepRecord& rec, std::string* out) {
  State& s = *state_;
  const bool keyframe = !options_.delta || !s.has_history;
  if (keyframe) s.clear();
  s.encodeBody(rec, keyframe, options_.delta);
  std::string_view body = s.body.view();

  // Output: the flags byte, then the body raw or zstd-compressed.
  uint8_t flags = keyframe ? kFlagKeyframe : 0;
  bool compressed = false;
  if (options_.zstd && body.size() > 16) {
    if (s.cctx == nullptr) s.cctx = ZSTD_createCCtx();
    s.compressed.resize(ZSTD_compressBound(body.size()));
    size_t csize = s.cctx ? ZSTD_compressCCtx(s.cctx, s.compressed.data(), s.compressed.size(), body.data(), body.size(), options_.zstd_level) : 0;
    // Worth a decompression at every reader only when it saves an eighth of the body.
    if (s.cctx && !ZSTD_isError(csize) && csize + varintSize(body.size()) < body.size() - body.size() / 8 &&
        body.size() <= csize * kMaxZstdRatio + kZstdSlack &&
        body.size() <= kMaxBodyBytes) {
      s.compressed.resize(csize);
      compressed = true;
    }
  }
  size_t need = out->size() + 1 + (compressed ? 10 + s.compressed.size() : body.size());
  if (out->capacity() < need) out->reserve(need);
  out->push_back(static_cast<char>((kVersion << 4) | flags | (compressed ? kFlagZstd : 0)));
  if (compressed) {
    ByteWriter o(out);
    o.putVarint(body.size());
    o.putBytes(s.compressed);
  } else {
    out->append(body);
  }

  // Remember this record as the reference for the next one.
  s.has_history = options_.delta;
  if (options_.delta) {
    s.cur.setStepFields(rec);
    std::swap(s.prev, s.cur);
  }
}

void encodeStandalone(const StepRecord& rec, std::string* out) {
  // One keyframe encoder per thread: its tables and buffers are reused, and a keyframe
  // never depends on what it encoded before.
  thread_local StepEncoder encoder(StepCodecOptions{.delta = false, .zstd = false});
  encoder.encode(rec, out);
}

std::string encodeStandalone(const StepRecord& rec) {
  std::string out;
  encodeStandalone(rec, &out);
  return out;
}

}  // namespace argus::model
