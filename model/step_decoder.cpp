// StepDecoder and decodeStandalone: reads the byte layout of docs/wire/step-record.md
// (the encoder is in step_codec.cpp).
//
// Hostile input yields Corruption, never a crash and never an allocation larger than the
// input justifies. Performance contract (bench/step_codec.cpp): decoding into a reused
// StepRecord allocates nothing in steady state: the record's lists and histograms keep
// their capacity, the previous record is kept as flat arrays (History) that swap with the
// current ones, and a keyframe's id tables swap with spare ones (kept for rollback).
#include <zstd.h>

#include <algorithm>
#include <limits>
#include <span>

#include "model/flat_index.h"
#include "model/step_codec.h"
#include "model/step_codec_format.h"

namespace argus::model {

using namespace step_format;  // NOLINT(google-build-using-namespace): the format's own constants
using Bucket = DurationHistogram::Bucket;

// Returns false from the enclosing bool function when a reader call fails.
#define ARGUS_STEP_TRY(expr) \
  do {                       \
    if (!(expr)) [[unlikely]] \
      return false;          \
  } while (0)

struct StepDecoder::State {
  bool has_history = false;
  uint8_t seq = 0;
  History prev, cur;
  std::vector<uint64_t> sigs, comms, stacks, names;  // dense id -> 64-bit id
  // The tables a keyframe replaced, restored if the keyframe fails to decode.
  std::vector<uint64_t> saved_sigs, saved_comms, saved_stacks, saved_names;
  FlatIndex prev_index;  // key -> index of its first entry in prev's list (scratch)
  PodArray<Bucket> inserts;     // a histogram edit's inserted buckets (scratch)
  std::string body;             // decompressed body (scratch)
  ZSTD_DCtx* dctx = nullptr;
  // Decoded-size budget of the record being decoded (decodedUnitBudget()).
  size_t budget = 0;
  size_t used = 0;
  size_t encoded_bytes = 0;  // the record's bytes, with its body decompressed

  ~State() { ZSTD_freeDCtx(dctx); }

  void clear() {
    has_history = false;
    seq = 0;
    prev.clear();
    sigs.clear();
    comms.clear();
    stacks.clear();
    names.clear();
  }

  // Decodes a body against `ref` (prev, or an empty history for a keyframe) into *out and
  // cur. On failure r.status() says why.
  bool decodeBody(StepReader& r, uint8_t version, bool keyframe, const History& ref, StepRecord* out);

  // Charges n units (list entries or histogram buckets) of `field` to the record's
  // decoded-size budget before they are materialised.
  bool spend(StepReader& r, size_t n, const char* field) {
    if (n <= budget - used) [[likely]] {
      used += n;
      return true;
    }
    return overBudget(r, n, field);
  }
  [[gnu::cold, gnu::noinline]] bool overBudget(StepReader& r, size_t n, const char* field) {
    return r.fail(std::string(field) + ": decoded size over budget (" + std::to_string(used) + " + " + std::to_string(n) +
                  " list entries and histogram buckets > " + std::to_string(budget) + " allowed for a " +
                  std::to_string(encoded_bytes) + "-byte record)");
  }
};

namespace {

// Reads the dense id of a reference written by putId (ref = v >> shift_bits); a new id
// is appended to the table.
bool getId(StepReader& r, std::vector<uint64_t>& table, uint64_t v, int shift_bits, const char* field, uint32_t* dense) {
  uint64_t ref = v >> shift_bits;
  if (ref != 0) [[likely]] {
    if (ref - 1 >= table.size()) return r.fail(std::string("unknown dense ") + field + " id " + std::to_string(ref - 1));
    *dense = static_cast<uint32_t>(ref - 1);
    return true;
  }
  if (table.size() >= kMaxDenseIds) return r.fail(std::string("too many distinct ") + field + " ids");
  uint64_t id = 0;
  ARGUS_STEP_TRY(r.fixed64(&id));
  table.push_back(id);
  *dense = static_cast<uint32_t>(table.size() - 1);
  return true;
}

inline bool getDelta(StepReader& r, int64_t base, int64_t* v) {
  uint64_t u;
  ARGUS_STEP_TRY(r.varint(&u));
  *v = addDelta(base, zigzagDecode(u));
  return true;
}

// Reads a delta onto an unsigned field; results above `max` are corrupt.
inline bool getUnsignedDelta(StepReader& r, uint64_t base, uint64_t max, const char* field, uint64_t* v) {
  int64_t d;
  ARGUS_STEP_TRY(getDelta(r, static_cast<int64_t>(base), &d));
  *v = static_cast<uint64_t>(d);
  if (*v > max) [[unlikely]]
    return r.fail(std::string(field) + " out of range");
  return true;
}

bool getListHeader(StepReader& r, bool keyframe, size_t prev_size, size_t min_entry_bytes, const char* field, bool* same, size_t* n) {
  uint64_t v = 0;
  ARGUS_STEP_TRY(r.varint(&v));
  if (v == 0) {
    if (keyframe) return r.fail(std::string(field) + ": 'same as previous' in a keyframe");
    *same = true;
    *n = prev_size;
  } else {
    *same = false;
    *n = v - 1;
    if (*n > kMaxListSize) return r.fail(std::string(field) + " count " + std::to_string(*n) + " exceeds limit");
  }
  if (*n > r.remaining() / min_entry_bytes) return r.fail(std::string(field) + " count " + std::to_string(*n) + " exceeds the bytes remaining");
  return true;
}

// Appends an explicit histogram (modes 2-4) to an empty b: valid buckets (strictly
// increasing indices within [0, kMaxIndex], counts in [1, 2^32-1]) or a failure.
bool getHist(StepReader& r, HistMode mode, int32_t ref, std::vector<Bucket>& b) {
  constexpr int32_t kMax = DurationHistogram::kMaxIndex;
  if (mode == kHistSparse) {
    uint64_t n = 0;
    ARGUS_STEP_TRY(r.boundedVarint(&n, std::min<uint64_t>(r.remaining() / 2, kMax + 1), "histogram bucket count"));
    int64_t idx = 0;
    for (uint64_t j = 0; j < n; ++j) {
      if (j == 0) {
        int64_t d = 0;
        ARGUS_STEP_TRY(r.zz(&d));
        if (d < -kMax || d > kMax) return r.fail("histogram first index out of range");
        idx = ref + d;
      } else {
        uint64_t gap = 0;
        ARGUS_STEP_TRY(r.varint(&gap));
        if (gap > static_cast<uint64_t>(kMax)) return r.fail("histogram index gap out of range");
        idx += static_cast<int64_t>(gap) + 1;
      }
      if (idx < 0 || idx > kMax) return r.fail("histogram index out of range");
      uint64_t count = 0;
      ARGUS_STEP_TRY(r.varint(&count));
      if (count == 0 || count > std::numeric_limits<uint32_t>::max()) return r.fail("histogram bucket count invalid");
      b.push_back({static_cast<int32_t>(idx), static_cast<uint32_t>(count)});
    }
    return true;
  }
  // Dense modes.
  int64_t d = 0;
  uint64_t span = 0;
  ARGUS_STEP_TRY(r.zz(&d));
  if (d < -kMax || d > kMax || ref + d < 0 || ref + d > kMax) return r.fail("histogram first index out of range");
  int32_t first = static_cast<int32_t>(ref + d);
  ARGUS_STEP_TRY(r.varint(&span));
  if (span > static_cast<uint64_t>(kMax - first)) return r.fail("histogram span out of range");
  size_t slots = static_cast<size_t>(span) + 1;
  if (mode == kHistDenseNibble) {
    const uint8_t* bytes = nullptr;
    size_t nbytes = (slots + 1) / 2;
    ARGUS_STEP_TRY(r.bytes(nbytes, &bytes));
    if (slots % 2 == 1 && (bytes[nbytes - 1] >> 4) != 0) return r.fail("histogram padding nibble not zero");
    for (size_t j = 0; j < nbytes; ++j) {
      uint8_t lo = bytes[j] & 0x0f, hi = bytes[j] >> 4;
      int32_t at = first + static_cast<int32_t>(2 * j);
      if (lo) b.push_back({at, lo});
      if (hi) b.push_back({at + 1, hi});  // the pad nibble is 0
    }
  } else {
    if (slots > r.remaining()) return r.fail("histogram span exceeds the bytes remaining");
    for (size_t j = 0; j < slots; ++j) {
      uint64_t c = 0;
      ARGUS_STEP_TRY(r.varint(&c));
      if (c > std::numeric_limits<uint32_t>::max()) return r.fail("histogram bucket count invalid");
      if (c) b.push_back({first + static_cast<int32_t>(j), static_cast<uint32_t>(c)});
    }
  }
  if (b.empty() || b.front().index != first || b.back().index != first + static_cast<int32_t>(span)) {
    return r.fail("histogram span does not start and end on a non-empty bucket");
  }
  return true;
}

// Appends the edit form (mode kHistEdit) of a histogram against a non-empty prev to an
// empty b: the inserted buckets (read into `inserts` first), merged with prev's buckets
// whose counts change by the deltas that follow; a count that drops to 0 removes the
// bucket. Valid buckets or a failure.
bool getEdit(StepReader& r, std::span<const Bucket> prev, PodArray<Bucket>& inserts, std::vector<Bucket>& b) {
  constexpr int32_t kMax = DurationHistogram::kMaxIndex;
  uint64_t n = 0;
  ARGUS_STEP_TRY(r.boundedVarint(&n, std::min<uint64_t>(r.remaining() / 2, kMax + 1), "histogram inserted bucket count"));
  inserts.clear();
  int64_t idx = prev.front().index;
  for (uint64_t j = 0; j < n; ++j) {
    if (j == 0) {
      int64_t d = 0;
      ARGUS_STEP_TRY(r.zz(&d));
      if (d < -kMax || d > kMax) return r.fail("histogram inserted index out of range");
      idx += d;
    } else {
      uint64_t gap = 0;
      ARGUS_STEP_TRY(r.varint(&gap));
      if (gap > static_cast<uint64_t>(kMax)) return r.fail("histogram index gap out of range");
      idx += static_cast<int64_t>(gap) + 1;
    }
    if (idx < 0 || idx > kMax) return r.fail("histogram inserted index out of range");
    uint64_t count = 0;
    ARGUS_STEP_TRY(r.varint(&count));
    if (count == 0 || count > std::numeric_limits<uint32_t>::max()) return r.fail("histogram bucket count invalid");
    inserts.push_back({static_cast<int32_t>(idx), static_cast<uint32_t>(count)});
  }
  size_t j = 0;
  for (const Bucket& p : prev) {
    for (; j < inserts.size() && inserts[j].index < p.index; ++j) b.push_back(inserts[j]);
    if (j < inserts.size() && inserts[j].index == p.index) return r.fail("histogram inserts a bucket the previous one has");
    int64_t d = 0;
    ARGUS_STEP_TRY(r.zz(&d));
    if (d < -(int64_t{1} << 33) || d > (int64_t{1} << 33)) return r.fail("histogram bucket count change out of range");
    int64_t count = static_cast<int64_t>(p.count) + d;
    if (count < 0 || count > std::numeric_limits<uint32_t>::max()) return r.fail("histogram bucket count invalid");
    if (count > 0) b.push_back({p.index, static_cast<uint32_t>(count)});
  }
  for (; j < inserts.size(); ++j) b.push_back(inserts[j]);
  return true;
}

const CollectiveStat kNoCollective{};

}  // namespace

bool StepDecoder::State::decodeBody(StepReader& r, uint8_t version, bool keyframe, const History& ref, StepRecord* out) {
  uint64_t u = 0;
  if (keyframe) {
    ARGUS_STEP_TRY(r.boundedVarint(&u, std::numeric_limits<uint32_t>::max(), "rank"));
    out->rank = static_cast<uint32_t>(u);
    ARGUS_STEP_TRY(r.varint(&u));
    out->step = u;
    ARGUS_STEP_TRY(r.boundedVarint(&u, std::numeric_limits<uint16_t>::max(), "attempt"));
    out->attempt = static_cast<uint16_t>(u);
    ARGUS_STEP_TRY(r.zz(&out->start_ns));
  } else {
    uint8_t seq_byte = 0, step_byte = 0;
    ARGUS_STEP_TRY(r.u8(&seq_byte));
    ARGUS_STEP_TRY(r.u8(&step_byte));
    if (seq_byte != static_cast<uint8_t>(seq + 1) || step_byte != static_cast<uint8_t>(ref.step)) {
      return r.failWith(Status::corruption("step record: delta record does not follow this decoder's history (record #" + std::to_string(seq_byte) +
                                           " after step low byte " + std::to_string(step_byte) + "; decoder is at record #" + std::to_string(seq) +
                                           ", step " + std::to_string(ref.step) + ")"));
    }
    ARGUS_STEP_TRY(getUnsignedDelta(r, ref.rank, std::numeric_limits<uint32_t>::max(), "rank", &u));
    out->rank = static_cast<uint32_t>(u);
    int64_t d = 0;
    ARGUS_STEP_TRY(getDelta(r, static_cast<int64_t>(ref.step + 1), &d));
    out->step = static_cast<uint64_t>(d);
    ARGUS_STEP_TRY(getUnsignedDelta(r, ref.attempt, std::numeric_limits<uint16_t>::max(), "attempt", &u));
    out->attempt = static_cast<uint16_t>(u);
    ARGUS_STEP_TRY(getDelta(r, ref.end_ns, &out->start_ns));
  }
  int64_t span_ns = 0;
  ARGUS_STEP_TRY(getDelta(r, subWrap(ref.end_ns, ref.start_ns), &span_ns));
  out->end_ns = addDelta(out->start_ns, span_ns);
  ARGUS_STEP_TRY(getDelta(r, subWrap(out->end_ns, out->start_ns), &out->iter_ns));
  ARGUS_STEP_TRY(r.boundedVarint(&u, std::numeric_limits<uint32_t>::max(), "flags"));
  out->flags = static_cast<uint32_t>(u);
  for (int i = 0; i < kPhaseColumnCount; ++i) ARGUS_STEP_TRY(getDelta(r, ref.phase_ns[i], &out->phase_ns[i]));

  cur.clearLists();

  // Kernels.
  {
    bool same;
    size_t n;
    // An entry takes at least its tag byte (and in version 1 its total).
    ARGUS_STEP_TRY(getListHeader(r, keyframe, ref.kernels.size(), version == 1 ? 2 : 1, "kernel list", &same, &n));
    ARGUS_STEP_TRY(spend(r, n, "kernel list"));
    if (!same && !keyframe) {
      prev_index.clear();
      bool inserted;
      for (size_t i = 0; i < ref.kernels.size(); ++i) {
        prev_index.findOrInsert({kernelKey(ref.kernels[i].dense, ref.kernels[i].phase), 0}, static_cast<uint32_t>(i), &inserted);
      }
    }
    out->kernels.resize(n);
    cur.kernels.resizeUninitialized(n);
    int32_t last_first = 0;  // v2: first index of the last non-empty histogram read
    for (size_t i = 0; i < n; ++i) {
      KernelStat& k = out->kernels[i];
      const KernelRef* p = &kNoKernel;
      uint32_t dense;
      if (same) {
        p = &ref.kernels[i];
        dense = p->dense;
        k.signature = p->signature;
        k.phase = p->phase;
      } else {
        uint64_t key = 0;
        ARGUS_STEP_TRY(r.varint(&key));
        ARGUS_STEP_TRY(getId(r, sigs, key, 3, "kernel signature", &dense));
        uint8_t phase = static_cast<uint8_t>(key & 7);
        if (phase == kPhaseEscape) ARGUS_STEP_TRY(r.u8(&phase));
        if (phase > static_cast<uint8_t>(Phase::kOther)) return r.fail("unknown kernel phase " + std::to_string(phase));
        k.signature = sigs[dense];
        k.phase = static_cast<Phase>(phase);
        if (!keyframe) {
          uint32_t j = prev_index.find({kernelKey(dense, k.phase), 0});
          if (j != FlatIndex::kAbsent) p = &ref.kernels[j];
        }
      }
      uint64_t tag = 0;
      ARGUS_STEP_TRY(r.varint(&tag));
      auto mode = static_cast<HistMode>(tag & 7);
      if (mode > (version == 1 ? kHistSparse : kHistEdit)) return r.fail("unknown histogram mode " + std::to_string(tag & 7));
      int64_t count = addDelta(p->count, zigzagDecode(tag >> 3));
      if (count < 0 || count > std::numeric_limits<uint32_t>::max()) return r.fail("kernel count out of range");
      k.count = static_cast<uint32_t>(count);
      std::span<const Bucket> prev_hist = ref.hist(*p);
      const int32_t hist_ref = !prev_hist.empty() ? prev_hist.front().index : last_first;
      if (version == 1) ARGUS_STEP_TRY(getDelta(r, predictTotal(p->total_ns, p->count, k.count), &k.total_ns));
      // Straight into the record's histogram (capacity reused); every mode yields valid
      // buckets or fails.
      switch (mode) {
        case kHistSame:  // prev's buckets were decoded or checked before
          ARGUS_STEP_TRY(spend(r, prev_hist.size(), "kernel histogram (same as previous)"));
          k.hist.refill([&](std::vector<Bucket>& b) {
            b.assign(prev_hist.begin(), prev_hist.end());
            return true;
          });
          break;
        case kHistSingle: {  // v1: kHistImpliedV1
          ARGUS_STEP_TRY(spend(r, 1, "kernel histogram"));
          int32_t index;
          if (version == 1) {
            if (k.count != 1) return r.fail("implied histogram with count " + std::to_string(k.count));
            index = DurationHistogram::bucketOf(k.total_ns);
          } else {
            if (k.count == 0) return r.fail("single-bucket histogram with count 0");
            int64_t d = 0;
            ARGUS_STEP_TRY(r.zz(&d));
            if (d < -DurationHistogram::kMaxIndex || d > DurationHistogram::kMaxIndex || hist_ref + d < 0 || hist_ref + d > DurationHistogram::kMaxIndex) {
              return r.fail("histogram index out of range");
            }
            index = static_cast<int32_t>(hist_ref + d);
          }
          k.hist.refill([&](std::vector<Bucket>& b) {
            b.push_back({index, k.count});
            return true;
          });
          break;
        }
        case kHistEdit:
          if (prev_hist.empty()) return r.fail("histogram edit without a previous histogram");
          ARGUS_STEP_TRY(k.hist.refill([&](std::vector<Bucket>& b) { return getEdit(r, prev_hist, inserts, b); }));
          ARGUS_STEP_TRY(spend(r, k.hist.buckets().size(), "kernel histogram"));
          break;
        default:
          // Explicit buckets cost input bytes (at most 2 per byte): charged once read.
          ARGUS_STEP_TRY(k.hist.refill([&](std::vector<Bucket>& b) { return getHist(r, mode, hist_ref, b); }));
          ARGUS_STEP_TRY(spend(r, k.hist.buckets().size(), "kernel histogram"));
          break;
      }
      const int64_t sketch_ns = mode == kHistSame ? p->sketch_ns : DurationHistogram::sketchTotal(k.hist.buckets());
      if (version != 1) {
        k.total_ns = predictTotalV2(*p, sketch_ns);  // the totals block below may correct it
        if (!k.hist.empty()) last_first = k.hist.buckets().front().index;
      }
      cur.setKernel(i, k, dense, sketch_ns);
    }
    if (version != 1) {
      uint8_t any_miss = 0;
      ARGUS_STEP_TRY(r.u8(&any_miss));
      if (any_miss > 1) return r.fail("kernel totals flag " + std::to_string(any_miss));
      for (size_t i = 0; any_miss && i < n; ++i) {
        KernelStat& k = out->kernels[i];
        ARGUS_STEP_TRY(getDelta(r, k.total_ns, &k.total_ns));
        cur.kernels[i].total_ns = k.total_ns;
      }
    }
  }

  // Collectives.
  {
    bool same;
    size_t n;
    ARGUS_STEP_TRY(getListHeader(r, keyframe, ref.collectives.size(), 4, "collective list", &same, &n));
    ARGUS_STEP_TRY(spend(r, n, "collective list"));
    if (!same && !keyframe) {
      prev_index.clear();
      bool inserted;
      for (size_t i = 0; i < ref.collectives.size(); ++i) {
        const auto& c = ref.collectives[i];
        prev_index.findOrInsert({collectiveKey(c.op, ref.comm_dense[i], c.size_class), c.peer_rank}, static_cast<uint32_t>(i), &inserted);
      }
    }
    out->collectives.resize(n);
    for (size_t i = 0; i < n; ++i) {
      CollectiveStat& c = out->collectives[i];
      const CollectiveStat* p = &kNoCollective;
      uint32_t dense;
      if (same) {
        const CollectiveStat& q = ref.collectives[i];
        dense = ref.comm_dense[i];
        c.op = q.op;
        c.communicator = q.communicator;
        c.size_class = q.size_class;
        c.peer_rank = q.peer_rank;
        p = &q;
      } else {
        uint8_t op = 0;
        ARGUS_STEP_TRY(r.u8(&op));
        if (op > static_cast<uint8_t>(CollectiveOp::kBarrier)) return r.fail("unknown collective op " + std::to_string(op));
        c.op = static_cast<CollectiveOp>(op);
        uint64_t id_ref = 0;
        ARGUS_STEP_TRY(r.varint(&id_ref));
        ARGUS_STEP_TRY(getId(r, comms, id_ref, 0, "communicator", &dense));
        c.communicator = comms[dense];
        ARGUS_STEP_TRY(r.u8(&c.size_class));
        ARGUS_STEP_TRY(r.boundedVarint(&u, std::numeric_limits<uint32_t>::max(), "peer rank"));
        c.peer_rank = static_cast<uint32_t>(u) - 1;
        if (!keyframe) {
          uint32_t j = prev_index.find({collectiveKey(c.op, dense, c.size_class), c.peer_rank});
          if (j != FlatIndex::kAbsent) p = &ref.collectives[j];
        }
      }
      ARGUS_STEP_TRY(getUnsignedDelta(r, p->count, std::numeric_limits<uint32_t>::max(), "collective count", &u));
      c.count = static_cast<uint32_t>(u);
      int64_t bytes = 0;
      ARGUS_STEP_TRY(getDelta(r, static_cast<int64_t>(p->bytes), &bytes));
      c.bytes = static_cast<uint64_t>(bytes);
      ARGUS_STEP_TRY(getDelta(r, p->total_ns, &c.total_ns));
      ARGUS_STEP_TRY(getDelta(r, p->wait_ns, &c.wait_ns));
      cur.collectives.push_back(c);
      cur.comm_dense.push_back(dense);
    }
  }

  // Stacks.
  {
    bool same;
    size_t n;
    ARGUS_STEP_TRY(getListHeader(r, keyframe, ref.stacks.size(), 1, "stack list", &same, &n));
    ARGUS_STEP_TRY(spend(r, n, "stack list"));
    if (!same && !keyframe) {
      prev_index.clear();
      bool inserted;
      for (size_t i = 0; i < ref.stacks.size(); ++i) prev_index.findOrInsert({ref.stack_dense[i], 0}, static_cast<uint32_t>(i), &inserted);
    }
    out->stacks.resize(n);
    for (size_t i = 0; i < n; ++i) {
      StackStat& st = out->stacks[i];
      uint32_t base = 0;
      uint32_t dense;
      if (same) {
        dense = ref.stack_dense[i];
        st.stack_id = ref.stacks[i].stack_id;
        base = ref.stacks[i].samples;
      } else {
        uint64_t id_ref = 0;
        ARGUS_STEP_TRY(r.varint(&id_ref));
        ARGUS_STEP_TRY(getId(r, stacks, id_ref, 0, "stack", &dense));
        st.stack_id = stacks[dense];
        if (!keyframe) {
          uint32_t j = prev_index.find({dense, 0});
          if (j != FlatIndex::kAbsent) base = ref.stacks[j].samples;
        }
      }
      ARGUS_STEP_TRY(getUnsignedDelta(r, base, std::numeric_limits<uint32_t>::max(), "stack samples", &u));
      st.samples = static_cast<uint32_t>(u);
      cur.stacks.push_back(st);
      cur.stack_dense.push_back(dense);
    }
  }

  // Events.
  {
    uint64_t n = 0;
    ARGUS_STEP_TRY(r.boundedVarint(&n, std::min<uint64_t>(kMaxListSize, r.remaining() / 4), "event count"));
    ARGUS_STEP_TRY(spend(r, static_cast<size_t>(n), "event list"));
    out->events.resize(static_cast<size_t>(n));
    int64_t ts = out->start_ns;
    for (auto& e : out->events) {
      uint8_t kind = 0;
      ARGUS_STEP_TRY(r.u8(&kind));
      if (kind > static_cast<uint8_t>(EventKind::kDroppedEvents)) return r.fail("unknown event kind " + std::to_string(kind));
      e.kind = static_cast<EventKind>(kind);
      ARGUS_STEP_TRY(getDelta(r, ts, &e.ts_ns));
      ts = e.ts_ns;
      ARGUS_STEP_TRY(r.varint(&e.value));
      uint64_t id_ref = 0;
      uint32_t dense = 0;
      ARGUS_STEP_TRY(r.varint(&id_ref));
      ARGUS_STEP_TRY(getId(r, names, id_ref, 0, "event name", &dense));
      e.name_id = names[dense];
    }
  }
  if (!r.atEnd()) return r.fail(std::to_string(r.remaining()) + " trailing bytes");
  return true;
}

StepDecoder::StepDecoder() : state_(std::make_shared<State>()) {}

void StepDecoder::reset() { state_->clear(); }

Status StepDecoder::decode(std::string_view in, StepRecord* out) {
  State& s = *state_;
  if (in.empty()) return Status::corruption("step record: truncated at offset 0");
  const uint8_t first = static_cast<uint8_t>(in[0]);
  const uint8_t version = first >> 4;
  if (version < kOldestVersion || version > kVersion) {
    return Status::corruption("step record: unknown format version " + std::to_string(version) + " (this decoder reads " +
                              std::to_string(kOldestVersion) + " to " + std::to_string(kVersion) + ")");
  }
  uint8_t flags = first & kFlagMask;
  if (flags & ~(kFlagKeyframe | kFlagZstd)) return Status::corruption("step record: reserved flag bits set: " + std::to_string(flags));
  const bool keyframe = flags & kFlagKeyframe;
  if (!keyframe && !s.has_history) {
    return Status::corruption("step record: delta record without history (no keyframe decoded since construction or reset)");
  }

  std::string_view body = in.substr(1);
  if (flags & kFlagZstd) {
    ByteReader head(body, "step record");
    uint64_t raw_len = 0;
    ARGUS_RETURN_IF_ERROR(head.getVarint(&raw_len));
    std::string_view frame = body.substr(head.offset());
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

  // Decode against the current history (a keyframe: against nothing, with fresh id
  // tables). On failure the id tables go back to what they were, so the decoder keeps its
  // history: a failed record is simply not part of the chain.
  static const History kNoHistory;
  const History& ref = keyframe ? kNoHistory : s.prev;
  size_t n_sigs = s.sigs.size(), n_comms = s.comms.size(), n_stacks = s.stacks.size(), n_names = s.names.size();
  if (keyframe) {
    s.saved_sigs.swap(s.sigs);
    s.saved_comms.swap(s.comms);
    s.saved_stacks.swap(s.stacks);
    s.saved_names.swap(s.names);
    s.sigs.clear();
    s.comms.clear();
    s.stacks.clear();
    s.names.clear();
  }
  StepReader r(body);
  // A compressed record is charged for its decompressed body: that is what the decoder
  // reads, and zstd's own ratio is bounded above (kMaxZstdRatio).
  s.encoded_bytes = (flags & kFlagZstd) ? 1 + body.size() : in.size();
  s.budget = decodedUnitBudget(s.encoded_bytes);
  s.used = 0;
  if (!s.decodeBody(r, version, keyframe, ref, out)) {
    if (keyframe) {
      s.sigs.swap(s.saved_sigs);
      s.comms.swap(s.saved_comms);
      s.stacks.swap(s.saved_stacks);
      s.names.swap(s.saved_names);
    } else {
      s.sigs.resize(n_sigs);
      s.comms.resize(n_comms);
      s.stacks.resize(n_stacks);
      s.names.resize(n_names);
    }
    return r.status();
  }
  s.seq = keyframe ? 0 : static_cast<uint8_t>(s.seq + 1);
  s.has_history = true;
  s.cur.setStepFields(*out);
  std::swap(s.prev, s.cur);
  return Status::ok();
}

size_t decodedUnits(const StepRecord& rec) {
  size_t n = rec.kernels.size() + rec.collectives.size() + rec.stacks.size() + rec.events.size();
  for (const auto& k : rec.kernels) n += k.hist.buckets().size();
  return n;
}

Status decodeStandalone(std::string_view in, StepRecord* out) {
  if (in.empty() || !(static_cast<uint8_t>(in[0]) & kFlagKeyframe)) {
    return Status::corruption("step record: standalone decode needs a keyframe");
  }
  // One decoder per thread: its tables and scratch are reused, and a keyframe never
  // depends on what it decoded before (a failed one leaves nothing behind that matters).
  thread_local StepDecoder decoder;
  return decoder.decode(in, out);
}

}  // namespace argus::model
