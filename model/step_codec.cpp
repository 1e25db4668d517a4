// The byte layout is specified in docs/wire/step-record.md; keep the two in step.
#include "model/step_codec.h"

#include <zstd.h>

#include <algorithm>
#include <functional>
#include <limits>

#include "base/bytes.h"

namespace argus::model {

namespace {

constexpr uint8_t kVersion = 1;
constexpr uint8_t kFlagKeyframe = 0x01;
constexpr uint8_t kFlagZstd = 0x02;
constexpr uint8_t kFlagMask = 0x0f;

// Limits the decoder enforces (the encoder REQUIRES records within them).
constexpr uint64_t kMaxListSize = 1u << 20;      // entries per list
constexpr uint64_t kMaxDenseIds = 1u << 20;      // ids per table per session
constexpr uint64_t kMaxBodyBytes = 64u << 20;    // decompressed body
constexpr uint64_t kMaxZstdRatio = 512;          // raw_len <= compressed * ratio + slack
constexpr uint64_t kZstdSlack = 4096;

// Histogram modes, low 3 bits of a kernel's tag. Do not renumber.
enum HistMode : uint8_t {
  kHistSame = 0,         // equals the previous histogram of the same key (empty if none)
  kHistImplied = 1,      // count == 1: one bucket at bucketOf(total_ns)
  kHistDenseNibble = 2,  // first, span, (span+1) 4-bit counts
  kHistDenseVarint = 3,  // first, span, (span+1) varint counts
  kHistSparse = 4,       // n, first, count, then (gap-1, count) pairs
};
constexpr uint8_t kPhaseEscape = 7;

// Wrapping arithmetic: deltas of arbitrary int64 values round-trip exactly.
inline uint64_t zzDelta(int64_t v, int64_t base) {
  return zigzagEncode(static_cast<int64_t>(static_cast<uint64_t>(v) - static_cast<uint64_t>(base)));
}
inline int64_t addDelta(int64_t base, int64_t delta) {
  return static_cast<int64_t>(static_cast<uint64_t>(base) + static_cast<uint64_t>(delta));
}
inline int64_t subWrap(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }

// Predicted total of a kernel: the previous total scaled by the count ratio.
int64_t predictTotal(const KernelStat& prev, uint32_t count) {
  if (prev.count == 0) return 0;
  __int128 p = static_cast<__int128>(prev.total_ns) * count / prev.count;
  return static_cast<int64_t>(static_cast<uint64_t>(p));  // modular, identical on both sides
}

int32_t histRef(const DurationHistogram& prev) { return prev.empty() ? 0 : prev.buckets().front().index; }

// The key of a kernel within a record: dense signature id and phase.
inline uint64_t kernelKey(uint32_t dense, Phase phase) { return (static_cast<uint64_t>(dense) << 8) | static_cast<uint8_t>(phase); }
inline uint64_t stackKey(uint32_t dense) { return dense; }

struct CollectiveKey {
  CollectiveOp op;
  uint32_t comm = 0;
  uint8_t size_class = 0;
  uint32_t peer = 0;
  bool operator==(const CollectiveKey&) const = default;
};
struct CollectiveKeyHash {
  size_t operator()(const CollectiveKey& k) const {
    uint64_t a = (static_cast<uint64_t>(k.comm) << 16) | (static_cast<uint64_t>(k.op) << 8) | k.size_class;
    return std::hash<uint64_t>()(a * 0x9e3779b97f4a7c15ull ^ k.peer);
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------
// Encoder

struct StepEncoder::State {
  bool has_history = false;
  uint8_t seq = 0;  // records since the keyframe, mod 256
  StepRecord prev;
  // Dense ids of the previous record's entries, parallel to prev's lists.
  std::vector<uint32_t> prev_kernel_ids, prev_comm_ids, prev_stack_ids;
  std::unordered_map<uint64_t, uint32_t> sig_ids, comm_ids, stack_ids, name_ids;
  // Scratch, reused across records.
  std::vector<uint32_t> kernel_ids, comm_ids_cur, stack_ids_cur;
  std::unordered_map<uint64_t, uint32_t> prev_index;  // key -> index in prev list
  std::unordered_map<CollectiveKey, uint32_t, CollectiveKeyHash> prev_coll_index;
  std::string body, compressed;
  ZSTD_CCtx* cctx = nullptr;

  ~State() { ZSTD_freeCCtx(cctx); }

  void clear() {
    has_history = false;
    seq = 0;
    sig_ids.clear();
    comm_ids.clear();
    stack_ids.clear();
    name_ids.clear();
    prev = StepRecord();
    prev_kernel_ids.clear();
    prev_comm_ids.clear();
    prev_stack_ids.clear();
  }

  // Writes an id reference: varint(dense + 1), or 0 and the full u64 for a new id.
  // Returns the dense id.
  static uint32_t putId(ByteWriter& w, std::unordered_map<uint64_t, uint32_t>& table, uint64_t id, uint64_t shift_bits, uint64_t low) {
    auto [it, inserted] = table.try_emplace(id, static_cast<uint32_t>(table.size()));
    if (inserted) {
      w.putVarint(low);
      w.putFixedLE(id, 8);
    } else {
      w.putVarint(((static_cast<uint64_t>(it->second) + 1) << shift_bits) | low);
    }
    return it->second;
  }
};

namespace {

void putHist(ByteWriter& w, const DurationHistogram& h, HistMode mode, int32_t ref) {
  const auto& b = h.buckets();
  switch (mode) {
    case kHistSame:
    case kHistImplied:
      return;
    case kHistDenseNibble:
    case kHistDenseVarint: {
      int32_t first = b.front().index, last = b.back().index;
      w.putSignedVarint(static_cast<int64_t>(first) - ref);
      w.putVarint(static_cast<uint64_t>(last - first));
      if (mode == kHistDenseVarint) {
        size_t j = 0;
        for (int32_t i = first; i <= last; ++i) {
          if (b[j].index == i) {
            w.putVarint(b[j++].count);
          } else {
            w.putU8(0);
          }
        }
      } else {
        size_t j = 0;
        uint8_t byte = 0;
        bool half = false;
        for (int32_t i = first; i <= last; ++i) {
          uint8_t c = 0;
          if (b[j].index == i) c = static_cast<uint8_t>(b[j++].count);
          if (!half) {
            byte = c;
          } else {
            w.putU8(static_cast<uint8_t>(byte | (c << 4)));
          }
          half = !half;
        }
        if (half) w.putU8(byte);
      }
      return;
    }
    case kHistSparse: {
      w.putVarint(b.size());
      int32_t prev = 0;
      for (size_t j = 0; j < b.size(); ++j) {
        if (j == 0) {
          w.putSignedVarint(static_cast<int64_t>(b[0].index) - ref);
        } else {
          w.putVarint(static_cast<uint64_t>(b[j].index - prev - 1));
        }
        w.putVarint(b[j].count);
        prev = b[j].index;
      }
      return;
    }
  }
}

size_t varintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Picks the cheapest explicit mode for a non-empty histogram (byte counts exclude the
// shared first-index field).
HistMode chooseExplicit(const DurationHistogram& h) {
  const auto& b = h.buckets();
  uint64_t span = static_cast<uint64_t>(b.back().index - b.front().index);
  bool nibbles = true;
  size_t varint_bytes = 0, sparse_bytes = varintSize(b.size());
  int32_t prev = b.front().index;
  for (size_t j = 0; j < b.size(); ++j) {
    nibbles = nibbles && b[j].count <= 15;
    size_t c = varintSize(b[j].count);
    varint_bytes += c;
    sparse_bytes += c + (j == 0 ? 0 : varintSize(static_cast<uint64_t>(b[j].index - prev - 1)));
    prev = b[j].index;
  }
  size_t dense_varint = varintSize(span) + varint_bytes + (span + 1 - b.size());
  size_t dense_nibble = varintSize(span) + (span + 2) / 2;
  if (nibbles && dense_nibble <= dense_varint && dense_nibble <= sparse_bytes) return kHistDenseNibble;
  return dense_varint <= sparse_bytes ? kHistDenseVarint : kHistSparse;
}

HistMode chooseHist(const KernelStat& k, const KernelStat& prev) {
  if (k.hist == prev.hist) return kHistSame;
  const auto& b = k.hist.buckets();
  if (k.count == 1 && b.size() == 1 && b[0].count == 1 && b[0].index == DurationHistogram::bucketOf(k.total_ns)) {
    return kHistImplied;
  }
  if (b.empty()) return kHistSparse;  // n = 0
  return chooseExplicit(k.hist);
}

}  // namespace

StepEncoder::StepEncoder(StepCodecOptions options) : options_(options), state_(std::make_shared<State>()) {}

void StepEncoder::reset() { state_->clear(); }

void StepEncoder::encode(const StepRecord& rec, std::string* out) {
  State& s = *state_;
  const bool keyframe = !options_.delta || !s.has_history;
  if (keyframe) s.clear();
  const StepRecord& prev = s.prev;  // all-zero after clear()

  s.body.clear();
  ByteWriter w(&s.body);

  // Step fields.
  if (keyframe) {
    w.putVarint(rec.rank);
    w.putVarint(rec.step);
    w.putVarint(rec.attempt);
    w.putSignedVarint(rec.start_ns);
  } else {
    s.seq = static_cast<uint8_t>(s.seq + 1);
    w.putU8(s.seq);
    w.putU8(static_cast<uint8_t>(prev.step));
    w.putVarint(zzDelta(rec.rank, prev.rank));
    w.putVarint(zzDelta(static_cast<int64_t>(rec.step), static_cast<int64_t>(prev.step + 1)));
    w.putVarint(zzDelta(rec.attempt, prev.attempt));
    w.putVarint(zzDelta(rec.start_ns, prev.end_ns));
  }
  // end_ns as the step's span, against the previous span (0 in a keyframe).
  int64_t span_ns = subWrap(rec.end_ns, rec.start_ns);
  w.putVarint(zzDelta(span_ns, subWrap(prev.end_ns, prev.start_ns)));
  w.putVarint(zzDelta(rec.iter_ns, span_ns));
  w.putVarint(rec.flags);
  for (int i = 0; i < kPhaseColumnCount; ++i) w.putVarint(zzDelta(rec.phase_ns[i], prev.phase_ns[i]));

  // Kernels.
  {
    const size_t n = rec.kernels.size();
    bool same = !keyframe && n == prev.kernels.size();
    s.kernel_ids.resize(n);
    if (same) {
      for (size_t i = 0; i < n && same; ++i) {
        same = rec.kernels[i].signature == prev.kernels[i].signature && rec.kernels[i].phase == prev.kernels[i].phase;
      }
    }
    if (!same && !keyframe) {
      s.prev_index.clear();
      for (size_t i = 0; i < prev.kernels.size(); ++i) {
        s.prev_index.try_emplace(kernelKey(s.prev_kernel_ids[i], prev.kernels[i].phase), static_cast<uint32_t>(i));
      }
    }
    w.putVarint(same ? 0 : n + 1);
    static const KernelStat kNone{};
    for (size_t i = 0; i < n; ++i) {
      const KernelStat& k = rec.kernels[i];
      const KernelStat* p = &kNone;
      if (same) {
        s.kernel_ids[i] = s.prev_kernel_ids[i];
        p = &prev.kernels[i];
      } else {
        uint8_t phase = static_cast<uint8_t>(k.phase);
        uint8_t low = phase < kPhaseEscape ? phase : kPhaseEscape;
        uint32_t dense = State::putId(w, s.sig_ids, k.signature, 3, low);
        if (low == kPhaseEscape) w.putU8(phase);
        s.kernel_ids[i] = dense;
        if (!keyframe) {
          auto it = s.prev_index.find(kernelKey(dense, k.phase));
          if (it != s.prev_index.end()) p = &prev.kernels[it->second];
        }
      }
      HistMode mode = chooseHist(k, *p);
      w.putVarint(mode | (zzDelta(k.count, p->count) << 3));
      w.putVarint(zzDelta(k.total_ns, predictTotal(*p, k.count)));
      putHist(w, k.hist, mode, histRef(p->hist));
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
      s.prev_coll_index.clear();
      for (size_t i = 0; i < prev.collectives.size(); ++i) {
        const auto& c = prev.collectives[i];
        s.prev_coll_index.try_emplace(CollectiveKey{c.op, s.prev_comm_ids[i], c.size_class, c.peer_rank}, static_cast<uint32_t>(i));
      }
    }
    s.comm_ids_cur.resize(n);
    w.putVarint(same ? 0 : n + 1);
    static const CollectiveStat kNone{};
    for (size_t i = 0; i < n; ++i) {
      const CollectiveStat& c = rec.collectives[i];
      const CollectiveStat* p = &kNone;
      if (same) {
        s.comm_ids_cur[i] = s.prev_comm_ids[i];
        p = &prev.collectives[i];
      } else {
        w.putU8(static_cast<uint8_t>(c.op));
        uint32_t dense = State::putId(w, s.comm_ids, c.communicator, 0, 0);
        s.comm_ids_cur[i] = dense;
        w.putU8(c.size_class);
        w.putVarint(static_cast<uint32_t>(c.peer_rank + 1));
        if (!keyframe) {
          auto it = s.prev_coll_index.find(CollectiveKey{c.op, dense, c.size_class, c.peer_rank});
          if (it != s.prev_coll_index.end()) p = &prev.collectives[it->second];
        }
      }
      w.putVarint(zzDelta(c.count, p->count));
      w.putVarint(zzDelta(static_cast<int64_t>(c.bytes), static_cast<int64_t>(p->bytes)));
      w.putVarint(zzDelta(c.total_ns, p->total_ns));
      w.putVarint(zzDelta(c.wait_ns, p->wait_ns));
    }
  }

  // Stacks.
  {
    const size_t n = rec.stacks.size();
    bool same = !keyframe && n == prev.stacks.size();
    for (size_t i = 0; i < n && same; ++i) same = rec.stacks[i].stack_id == prev.stacks[i].stack_id;
    if (!same && !keyframe) {
      s.prev_index.clear();
      for (size_t i = 0; i < prev.stacks.size(); ++i) s.prev_index.try_emplace(stackKey(s.prev_stack_ids[i]), static_cast<uint32_t>(i));
    }
    s.stack_ids_cur.resize(n);
    w.putVarint(same ? 0 : n + 1);
    for (size_t i = 0; i < n; ++i) {
      const StackStat& st = rec.stacks[i];
      uint32_t base = 0;
      if (same) {
        s.stack_ids_cur[i] = s.prev_stack_ids[i];
        base = prev.stacks[i].samples;
      } else {
        uint32_t dense = State::putId(w, s.stack_ids, st.stack_id, 0, 0);
        s.stack_ids_cur[i] = dense;
        if (!keyframe) {
          auto it = s.prev_index.find(stackKey(dense));
          if (it != s.prev_index.end()) base = prev.stacks[it->second].samples;
        }
      }
      w.putVarint(zzDelta(st.samples, base));
    }
  }

  // Events.
  {
    w.putVarint(rec.events.size());
    int64_t ts = rec.start_ns;
    for (const EventRecord& e : rec.events) {
      w.putU8(static_cast<uint8_t>(e.kind));
      w.putVarint(zzDelta(e.ts_ns, ts));
      ts = e.ts_ns;
      w.putVarint(e.value);
      State::putId(w, s.name_ids, e.name_id, 0, 0);
    }
  }

  // Output: the flags byte, then the body raw or zstd-compressed, whichever is smaller.
  uint8_t flags = keyframe ? kFlagKeyframe : 0;
  bool compressed = false;
  if (options_.zstd && s.body.size() > 16) {
    if (s.cctx == nullptr) s.cctx = ZSTD_createCCtx();
    s.compressed.resize(ZSTD_compressBound(s.body.size()));
    size_t csize = s.cctx ? ZSTD_compressCCtx(s.cctx, s.compressed.data(), s.compressed.size(), s.body.data(), s.body.size(), options_.zstd_level) : 0;
    if (s.cctx && !ZSTD_isError(csize) && csize + varintSize(s.body.size()) < s.body.size() &&
        s.body.size() <= csize * kMaxZstdRatio + kZstdSlack && s.body.size() <= kMaxBodyBytes) {
      s.compressed.resize(csize);
      compressed = true;
    }
  }
  ByteWriter o(out);
  o.putU8(static_cast<uint8_t>((kVersion << 4) | flags | (compressed ? kFlagZstd : 0)));
  if (compressed) {
    o.putVarint(s.body.size());
    o.putBytes(s.compressed);
  } else {
    o.putBytes(s.body);
  }

  // Remember this record as the reference for the next one.
  s.has_history = options_.delta;
  if (options_.delta) {
    s.prev = rec;
    s.prev_kernel_ids.swap(s.kernel_ids);
    s.prev_comm_ids.swap(s.comm_ids_cur);
    s.prev_stack_ids.swap(s.stack_ids_cur);
  }
}

// ---------------------------------------------------------------------------------------
// Decoder

struct StepDecoder::State {
  bool has_history = false;
  uint8_t seq = 0;
  StepRecord prev;
  std::vector<uint32_t> prev_kernel_ids, prev_comm_ids, prev_stack_ids;
  std::vector<uint64_t> sigs, comms, stacks, names;  // dense id -> 64-bit id
  // Scratch.
  std::vector<uint32_t> kernel_ids, comm_ids_cur, stack_ids_cur;
  std::unordered_map<uint64_t, uint32_t> prev_index;
  std::unordered_map<CollectiveKey, uint32_t, CollectiveKeyHash> prev_coll_index;
  std::vector<DurationHistogram::Bucket> buckets;
  std::string body;
  ZSTD_DCtx* dctx = nullptr;

  ~State() { ZSTD_freeDCtx(dctx); }

  void clear() {
    has_history = false;
    seq = 0;
    prev = StepRecord();
    prev_kernel_ids.clear();
    prev_comm_ids.clear();
    prev_stack_ids.clear();
    sigs.clear();
    comms.clear();
    stacks.clear();
    names.clear();
  }

  Status decodeBody(ByteReader& r, bool keyframe, StepRecord* out);
};

namespace {

Status corrupt(const ByteReader& r, const std::string& what) {
  return Status::corruption("step record: " + what + " at offset " + std::to_string(r.offset()));
}

// Reads a reference written by putId: returns the dense id; a new id is appended.
Status getId(ByteReader& r, std::vector<uint64_t>& table, uint64_t v, uint64_t shift_bits, const char* field, uint32_t* dense) {
  uint64_t ref = v >> shift_bits;
  if (ref == 0) {
    if (table.size() >= kMaxDenseIds) return corrupt(r, std::string("too many distinct ") + field + " ids");
    uint64_t id = 0;
    ARGUS_RETURN_IF_ERROR(r.getFixedLE(&id, 8));
    table.push_back(id);
    *dense = static_cast<uint32_t>(table.size() - 1);
    return Status::ok();
  }
  if (ref - 1 >= table.size()) return corrupt(r, std::string("unknown dense ") + field + " id " + std::to_string(ref - 1));
  *dense = static_cast<uint32_t>(ref - 1);
  return Status::ok();
}

Status getDelta(ByteReader& r, int64_t base, int64_t* v) {
  uint64_t u = 0;
  ARGUS_RETURN_IF_ERROR(r.getVarint(&u));
  *v = addDelta(base, zigzagDecode(u));
  return Status::ok();
}

// Reads a delta onto an unsigned field of `bits` width; out-of-range results are corrupt.
Status getUnsignedDelta(ByteReader& r, uint64_t base, uint64_t max, const char* field, uint64_t* v) {
  int64_t d = 0;
  ARGUS_RETURN_IF_ERROR(getDelta(r, static_cast<int64_t>(base), &d));
  *v = static_cast<uint64_t>(d);
  if (*v > max) return corrupt(r, std::string(field) + " out of range");
  return Status::ok();
}

Status getListHeader(ByteReader& r, bool keyframe, size_t prev_size, size_t min_entry_bytes, const char* field, bool* same, size_t* n) {
  uint64_t v = 0;
  ARGUS_RETURN_IF_ERROR(r.getVarint(&v));
  if (v == 0) {
    if (keyframe) return corrupt(r, std::string(field) + ": 'same as previous' in a keyframe");
    *same = true;
    *n = prev_size;
  } else {
    *same = false;
    *n = v - 1;
    if (*n > kMaxListSize) return corrupt(r, std::string(field) + " count " + std::to_string(*n) + " exceeds limit");
  }
  if (*n > r.remaining() / min_entry_bytes) return corrupt(r, std::string(field) + " count " + std::to_string(*n) + " exceeds the bytes remaining");
  return Status::ok();
}

Status getHist(ByteReader& r, HistMode mode, int32_t ref, std::vector<DurationHistogram::Bucket>& b) {
  constexpr int32_t kMax = DurationHistogram::kMaxIndex;
  b.clear();
  if (mode == kHistSparse) {
    uint64_t n = 0;
    ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&n, std::min<uint64_t>(r.remaining() / 2, kMax + 1), "histogram bucket count"));
    int64_t idx = 0;
    for (uint64_t j = 0; j < n; ++j) {
      int64_t d = 0;
      uint64_t gap = 0, count = 0;
      if (j == 0) {
        ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&d));
        if (d < -kMax || d > kMax) return corrupt(r, "histogram first index out of range");
        idx = ref + d;
      } else {
        ARGUS_RETURN_IF_ERROR(r.getVarint(&gap));
        if (gap > static_cast<uint64_t>(kMax)) return corrupt(r, "histogram index gap out of range");
        idx += static_cast<int64_t>(gap) + 1;
      }
      if (idx < 0 || idx > kMax) return corrupt(r, "histogram index out of range");
      ARGUS_RETURN_IF_ERROR(r.getVarint(&count));
      if (count == 0 || count > std::numeric_limits<uint32_t>::max()) return corrupt(r, "histogram bucket count invalid");
      b.push_back({static_cast<int32_t>(idx), static_cast<uint32_t>(count)});
    }
    return Status::ok();
  }
  // Dense modes.
  int64_t d = 0;
  uint64_t span = 0;
  ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&d));
  if (d < -kMax || d > kMax || ref + d < 0 || ref + d > kMax) return corrupt(r, "histogram first index out of range");
  int32_t first = static_cast<int32_t>(ref + d);
  ARGUS_RETURN_IF_ERROR(r.getVarint(&span));
  if (span > static_cast<uint64_t>(kMax - first)) return corrupt(r, "histogram span out of range");
  size_t slots = static_cast<size_t>(span) + 1;
  if (mode == kHistDenseNibble) {
    std::string_view bytes;
    ARGUS_RETURN_IF_ERROR(r.getBytes((slots + 1) / 2, &bytes));
    for (size_t j = 0; j < slots; ++j) {
      uint8_t c = static_cast<uint8_t>(bytes[j / 2]);
      c = (j % 2 == 0) ? (c & 0x0f) : (c >> 4);
      if (c) b.push_back({first + static_cast<int32_t>(j), c});
    }
    if (slots % 2 == 1 && (static_cast<uint8_t>(bytes.back()) >> 4) != 0) return corrupt(r, "histogram padding nibble not zero");
  } else {
    if (slots > r.remaining()) return corrupt(r, "histogram span exceeds the bytes remaining");
    for (size_t j = 0; j < slots; ++j) {
      uint64_t c = 0;
      ARGUS_RETURN_IF_ERROR(r.getVarint(&c));
      if (c > std::numeric_limits<uint32_t>::max()) return corrupt(r, "histogram bucket count invalid");
      if (c) b.push_back({first + static_cast<int32_t>(j), static_cast<uint32_t>(c)});
    }
  }
  if (b.empty() || b.front().index != first || b.back().index != first + static_cast<int32_t>(span)) {
    return corrupt(r, "histogram span does not start and end on a non-empty bucket");
  }
  return Status::ok();
}

}  // namespace

Status StepDecoder::State::decodeBody(ByteReader& r, bool keyframe, StepRecord* out) {
  uint64_t u = 0;
  if (keyframe) {
    ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&u, std::numeric_limits<uint32_t>::max(), "rank"));
    out->rank = static_cast<uint32_t>(u);
    ARGUS_RETURN_IF_ERROR(r.getVarint(&u));
    out->step = u;
    ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&u, std::numeric_limits<uint16_t>::max(), "attempt"));
    out->attempt = static_cast<uint16_t>(u);
    ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&out->start_ns));
  } else {
    uint8_t seq_byte = 0, step_byte = 0;
    ARGUS_RETURN_IF_ERROR(r.getU8(&seq_byte));
    ARGUS_RETURN_IF_ERROR(r.getU8(&step_byte));
    if (seq_byte != static_cast<uint8_t>(seq + 1) || step_byte != static_cast<uint8_t>(prev.step)) {
      return Status::corruption("step record: delta record does not follow this decoder's history (record #" + std::to_string(seq_byte) +
                                " after step low byte " + std::to_string(step_byte) + "; decoder is at record #" + std::to_string(seq) +
                                ", step " + std::to_string(prev.step) + ")");
    }
    ARGUS_RETURN_IF_ERROR(getUnsignedDelta(r, prev.rank, std::numeric_limits<uint32_t>::max(), "rank", &u));
    out->rank = static_cast<uint32_t>(u);
    int64_t d = 0;
    ARGUS_RETURN_IF_ERROR(getDelta(r, static_cast<int64_t>(prev.step + 1), &d));
    out->step = static_cast<uint64_t>(d);
    ARGUS_RETURN_IF_ERROR(getUnsignedDelta(r, prev.attempt, std::numeric_limits<uint16_t>::max(), "attempt", &u));
    out->attempt = static_cast<uint16_t>(u);
    ARGUS_RETURN_IF_ERROR(getDelta(r, prev.end_ns, &out->start_ns));
  }
  int64_t span_ns = 0;
  ARGUS_RETURN_IF_ERROR(getDelta(r, subWrap(prev.end_ns, prev.start_ns), &span_ns));
  out->end_ns = addDelta(out->start_ns, span_ns);
  ARGUS_RETURN_IF_ERROR(getDelta(r, subWrap(out->end_ns, out->start_ns), &out->iter_ns));
  ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&u, std::numeric_limits<uint32_t>::max(), "flags"));
  out->flags = static_cast<uint32_t>(u);
  for (int i = 0; i < kPhaseColumnCount; ++i) ARGUS_RETURN_IF_ERROR(getDelta(r, prev.phase_ns[i], &out->phase_ns[i]));

  // Kernels.
  {
    bool same;
    size_t n;
    ARGUS_RETURN_IF_ERROR(getListHeader(r, keyframe, prev.kernels.size(), 2, "kernel list", &same, &n));
    if (!same && !keyframe) {
      prev_index.clear();
      for (size_t i = 0; i < prev.kernels.size(); ++i) {
        prev_index.try_emplace(kernelKey(prev_kernel_ids[i], prev.kernels[i].phase), static_cast<uint32_t>(i));
      }
    }
    out->kernels.resize(n);
    kernel_ids.resize(n);
    static const KernelStat kNone{};
    for (size_t i = 0; i < n; ++i) {
      KernelStat& k = out->kernels[i];
      const KernelStat* p = &kNone;
      if (same) {
        kernel_ids[i] = prev_kernel_ids[i];
        k.signature = prev.kernels[i].signature;
        k.phase = prev.kernels[i].phase;
        p = &prev.kernels[i];
      } else {
        uint64_t key = 0;
        ARGUS_RETURN_IF_ERROR(r.getVarint(&key));
        uint32_t dense = 0;
        ARGUS_RETURN_IF_ERROR(getId(r, sigs, key, 3, "kernel signature", &dense));
        uint8_t phase = static_cast<uint8_t>(key & 7);
        if (phase == kPhaseEscape) ARGUS_RETURN_IF_ERROR(r.getU8(&phase));
        if (phase > static_cast<uint8_t>(Phase::kOther)) return corrupt(r, "unknown kernel phase " + std::to_string(phase));
        kernel_ids[i] = dense;
        k.signature = sigs[dense];
        k.phase = static_cast<Phase>(phase);
        if (!keyframe) {
          auto it = prev_index.find(kernelKey(dense, k.phase));
          if (it != prev_index.end()) p = &prev.kernels[it->second];
        }
      }
      uint64_t tag = 0;
      ARGUS_RETURN_IF_ERROR(r.getVarint(&tag));
      auto mode = static_cast<HistMode>(tag & 7);
      if (mode > kHistSparse) return corrupt(r, "unknown histogram mode " + std::to_string(tag & 7));
      int64_t count = addDelta(p->count, zigzagDecode(tag >> 3));
      if (count < 0 || count > std::numeric_limits<uint32_t>::max()) return corrupt(r, "kernel count out of range");
      k.count = static_cast<uint32_t>(count);
      ARGUS_RETURN_IF_ERROR(getDelta(r, predictTotal(*p, k.count), &k.total_ns));
      switch (mode) {
        case kHistSame:
          k.hist = p->hist;
          break;
        case kHistImplied:
          if (k.count != 1) return corrupt(r, "implied histogram with count " + std::to_string(k.count));
          buckets.assign(1, {DurationHistogram::bucketOf(k.total_ns), 1});
          ARGUS_RETURN_IF_ERROR(k.hist.assignFrom(buckets));
          break;
        default:
          ARGUS_RETURN_IF_ERROR(getHist(r, mode, histRef(p->hist), buckets));
          ARGUS_RETURN_IF_ERROR(k.hist.assignFrom(buckets));
          break;
      }
    }
  }

  // Collectives.
  {
    bool same;
    size_t n;
    ARGUS_RETURN_IF_ERROR(getListHeader(r, keyframe, prev.collectives.size(), 4, "collective list", &same, &n));
    if (!same && !keyframe) {
      prev_coll_index.clear();
      for (size_t i = 0; i < prev.collectives.size(); ++i) {
        const auto& c = prev.collectives[i];
        prev_coll_index.try_emplace(CollectiveKey{c.op, prev_comm_ids[i], c.size_class, c.peer_rank}, static_cast<uint32_t>(i));
      }
    }
    out->collectives.resize(n);
    comm_ids_cur.resize(n);
    static const CollectiveStat kNone{};
    for (size_t i = 0; i < n; ++i) {
      CollectiveStat& c = out->collectives[i];
      const CollectiveStat* p = &kNone;
      if (same) {
        const CollectiveStat& q = prev.collectives[i];
        comm_ids_cur[i] = prev_comm_ids[i];
        c.op = q.op;
        c.communicator = q.communicator;
        c.size_class = q.size_class;
        c.peer_rank = q.peer_rank;
        p = &q;
      } else {
        uint8_t op = 0;
        ARGUS_RETURN_IF_ERROR(r.getU8(&op));
        if (op > static_cast<uint8_t>(CollectiveOp::kBarrier)) return corrupt(r, "unknown collective op " + std::to_string(op));
        c.op = static_cast<CollectiveOp>(op);
        uint64_t ref = 0;
        uint32_t dense = 0;
        ARGUS_RETURN_IF_ERROR(r.getVarint(&ref));
        ARGUS_RETURN_IF_ERROR(getId(r, comms, ref, 0, "communicator", &dense));
        comm_ids_cur[i] = dense;
        c.communicator = comms[dense];
        ARGUS_RETURN_IF_ERROR(r.getU8(&c.size_class));
        ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&u, std::numeric_limits<uint32_t>::max(), "peer rank"));
        c.peer_rank = static_cast<uint32_t>(u) - 1;
        if (!keyframe) {
          auto it = prev_coll_index.find(CollectiveKey{c.op, dense, c.size_class, c.peer_rank});
          if (it != prev_coll_index.end()) p = &prev.collectives[it->second];
        }
      }
      ARGUS_RETURN_IF_ERROR(getUnsignedDelta(r, p->count, std::numeric_limits<uint32_t>::max(), "collective count", &u));
      c.count = static_cast<uint32_t>(u);
      int64_t bytes = 0;
      ARGUS_RETURN_IF_ERROR(getDelta(r, static_cast<int64_t>(p->bytes), &bytes));
      c.bytes = static_cast<uint64_t>(bytes);
      ARGUS_RETURN_IF_ERROR(getDelta(r, p->total_ns, &c.total_ns));
      ARGUS_RETURN_IF_ERROR(getDelta(r, p->wait_ns, &c.wait_ns));
    }
  }

  // Stacks.
  {
    bool same;
    size_t n;
    ARGUS_RETURN_IF_ERROR(getListHeader(r, keyframe, prev.stacks.size(), 1, "stack list", &same, &n));
    if (!same && !keyframe) {
      prev_index.clear();
      for (size_t i = 0; i < prev.stacks.size(); ++i) prev_index.try_emplace(stackKey(prev_stack_ids[i]), static_cast<uint32_t>(i));
    }
    out->stacks.resize(n);
    stack_ids_cur.resize(n);
    for (size_t i = 0; i < n; ++i) {
      StackStat& st = out->stacks[i];
      uint32_t base = 0;
      if (same) {
        stack_ids_cur[i] = prev_stack_ids[i];
        st.stack_id = prev.stacks[i].stack_id;
        base = prev.stacks[i].samples;
      } else {
        uint64_t ref = 0;
        uint32_t dense = 0;
        ARGUS_RETURN_IF_ERROR(r.getVarint(&ref));
        ARGUS_RETURN_IF_ERROR(getId(r, stacks, ref, 0, "stack", &dense));
        stack_ids_cur[i] = dense;
        st.stack_id = stacks[dense];
        if (!keyframe) {
          auto it = prev_index.find(stackKey(dense));
          if (it != prev_index.end()) base = prev.stacks[it->second].samples;
        }
      }
      ARGUS_RETURN_IF_ERROR(getUnsignedDelta(r, base, std::numeric_limits<uint32_t>::max(), "stack samples", &u));
      st.samples = static_cast<uint32_t>(u);
    }
  }

  // Events.
  {
    uint64_t n = 0;
    ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&n, std::min<uint64_t>(kMaxListSize, r.remaining() / 4), "event count"));
    out->events.resize(static_cast<size_t>(n));
    int64_t ts = out->start_ns;
    for (auto& e : out->events) {
      uint8_t kind = 0;
      ARGUS_RETURN_IF_ERROR(r.getU8(&kind));
      if (kind > static_cast<uint8_t>(EventKind::kDroppedEvents)) return corrupt(r, "unknown event kind " + std::to_string(kind));
      e.kind = static_cast<EventKind>(kind);
      ARGUS_RETURN_IF_ERROR(getDelta(r, ts, &e.ts_ns));
      ts = e.ts_ns;
      ARGUS_RETURN_IF_ERROR(r.getVarint(&e.value));
      uint64_t ref = 0;
      uint32_t dense = 0;
      ARGUS_RETURN_IF_ERROR(r.getVarint(&ref));
      ARGUS_RETURN_IF_ERROR(getId(r, names, ref, 0, "event name", &dense));
      e.name_id = names[dense];
    }
  }
  if (!r.atEnd()) return corrupt(r, std::to_string(r.remaining()) + " trailing bytes");
  return Status::ok();
}

StepDecoder::StepDecoder() : state_(std::make_shared<State>()) {}

void StepDecoder::reset() { state_->clear(); }

Status StepDecoder::decode(std::string_view in, StepRecord* out) {
  State& s = *state_;
  ByteReader head(in, "step record");
  uint8_t first = 0;
  ARGUS_RETURN_IF_ERROR(head.getU8(&first));
  if ((first >> 4) != kVersion) {
    return Status::corruption("step record: unknown format version " + std::to_string(first >> 4) + " (this decoder reads " + std::to_string(kVersion) + ")");
  }
  uint8_t flags = first & kFlagMask;
  if (flags & ~(kFlagKeyframe | kFlagZstd)) return Status::corruption("step record: reserved flag bits set: " + std::to_string(flags));
  const bool keyframe = flags & kFlagKeyframe;
  if (!keyframe && !s.has_history) {
    return Status::corruption("step record: delta record without history (no keyframe decoded since construction or reset)");
  }

  std::string_view body = in.substr(1);
  if (flags & kFlagZstd) {
    uint64_t raw_len = 0;
    ARGUS_RETURN_IF_ERROR(head.getVarint(&raw_len));
    std::string_view frame = in.substr(head.offset());
    if (raw_len > kMaxBodyBytes || raw_len > frame.size() * kMaxZstdRatio + kZstdSlack) {
      return Status::corruption("step record: compressed body claims " + std::to_string(raw_len) + " bytes from " + std::to_string(frame.size()));
    }
    unsigned long long content = ZSTD_getFrameContentSize(frame.data(), frame.size());
    if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != raw_len) return Status::corruption("step record: zstd frame size disagrees with the header");
    if (s.dctx == nullptr) s.dctx = ZSTD_createDCtx();
    if (s.dctx == nullptr) return Status::resourceExhausted("step record: cannot allocate a zstd context");
    s.body.resize(static_cast<size_t>(raw_len));
    size_t got = ZSTD_decompressDCtx(s.dctx, s.body.data(), s.body.size(), frame.data(), frame.size());
    if (ZSTD_isError(got)) return Status::corruption(std::string("step record: zstd: ") + ZSTD_getErrorName(got));
    if (got != raw_len) return Status::corruption("step record: zstd body shorter than its header says");
    body = s.body;
  }

  // Decode against the current history; on failure roll the id tables back so that the
  // decoder keeps its history (a failed record is simply not part of the chain).
  std::vector<uint64_t> saved_sigs, saved_comms, saved_stacks, saved_names;
  size_t n_sigs = s.sigs.size(), n_comms = s.comms.size(), n_stacks = s.stacks.size(), n_names = s.names.size();
  StepRecord saved_prev;
  if (keyframe) {
    saved_sigs.swap(s.sigs);
    saved_comms.swap(s.comms);
    saved_stacks.swap(s.stacks);
    saved_names.swap(s.names);
    saved_prev = std::move(s.prev);
    s.prev = StepRecord();
  }
  ByteReader r(body, "step record");
  Status st = s.decodeBody(r, keyframe, out);
  if (!st.isOk()) {
    if (keyframe) {
      s.sigs.swap(saved_sigs);
      s.comms.swap(saved_comms);
      s.stacks.swap(saved_stacks);
      s.names.swap(saved_names);
      s.prev = std::move(saved_prev);
    } else {
      s.sigs.resize(n_sigs);
      s.comms.resize(n_comms);
      s.stacks.resize(n_stacks);
      s.names.resize(n_names);
    }
    return st;
  }
  s.seq = keyframe ? 0 : static_cast<uint8_t>(s.seq + 1);
  s.has_history = true;
  s.prev = *out;
  s.prev_kernel_ids.swap(s.kernel_ids);
  s.prev_comm_ids.swap(s.comm_ids_cur);
  s.prev_stack_ids.swap(s.stack_ids_cur);
  return Status::ok();
}

std::string encodeStandalone(const StepRecord& rec) {
  StepEncoder enc(StepCodecOptions{.delta = false, .zstd = false});
  std::string out;
  enc.encode(rec, &out);
  return out;
}

Status decodeStandalone(std::string_view in, StepRecord* out) {
  if (in.empty() || !(static_cast<uint8_t>(in[0]) & kFlagKeyframe)) {
    return Status::corruption("step record: standalone decode needs a keyframe");
  }
  StepDecoder dec;
  return dec.decode(in, out);
}

}  // namespace argus::model
