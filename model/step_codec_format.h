// Internal to the step codec (model/step_codec.cpp, model/step_decoder.cpp): constants of
// the byte format in docs/wire/step-record.md and the byte-level writer/reader the hot
// loops use. Not a public interface.
//
// StepWriter and StepReader exist (next to base/bytes.h's ByteWriter/ByteReader) for
// speed: the writer writes through a raw pointer into a buffer that keeps its capacity
// (callers reserve() a bound per entry, then write without checks), and the reader's
// getters return bool with a one-byte fast path for varints, building a Status only on
// failure.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/bytes.h"
#include "base/status.h"
#include "model/step_record.h"

namespace argus::model::step_format {

// The version the encoder writes, and the oldest the decoder still reads (records of
// older senders sit in head entries until sealed).
constexpr uint8_t kVersion = 2;
constexpr uint8_t kOldestVersion = 1;
constexpr uint8_t kFlagKeyframe = 0x01;
constexpr uint8_t kFlagZstd = 0x02;
constexpr uint8_t kFlagMask = 0x0f;

// Limits the decoder enforces (the encoder REQUIRES records within them).
constexpr uint64_t kMaxListSize = 1u << 20;    // entries per list
constexpr uint64_t kMaxDenseIds = 1u << 20;    // ids per table per session
constexpr uint64_t kMaxBodyBytes = 64u << 20;  // decompressed body
constexpr uint64_t kMaxZstdRatio = 512;        // raw_len <= compressed * ratio + slack
constexpr uint64_t kZstdSlack = 4096;

// Histogram modes, low 3 bits of a kernel's tag. Do not renumber.
enum HistMode : uint8_t {
  kHistSame = 0,         // equals the previous histogram of the same key (empty if none)
  kHistSingle = 1,       // v2: one bucket holding all `count` durations
  kHistImpliedV1 = 1,    // v1: count == 1, one bucket at bucketOf(total_ns)
  kHistDenseNibble = 2,  // first, span, (span+1) 4-bit counts
  kHistDenseVarint = 3,  // first, span, (span+1) varint counts
  kHistSparse = 4,       // n, first, count, then (gap-1, count) pairs
  kHistEdit = 5,         // v2: inserted buckets, then a count delta per previous bucket
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

// Version 1's predicted total of a kernel: the previous total scaled by the count ratio,
// prev_total * count / prev_count with a 128-bit product, truncating division, result
// mod 2^64 (identical on both sides). The common cases avoid the 128-bit division.
inline int64_t predictTotal(int64_t prev_total, uint32_t prev_count, uint32_t count) {
  if (prev_count == 0) return 0;
  if (count == prev_count) return prev_total;  // exact: (p * c) / c == p
  int64_t product;
  if (!__builtin_mul_overflow(prev_total, static_cast<int64_t>(count), &product)) return product / static_cast<int64_t>(prev_count);
  __int128 p = static_cast<__int128>(prev_total) * count / prev_count;
  return static_cast<int64_t>(static_cast<uint64_t>(p));
}

inline size_t varintSize(uint64_t v) { return static_cast<size_t>((std::bit_width(v | 1) + 6) / 7); }

// The key of a kernel within a record: dense signature id and phase.
inline uint64_t kernelKey(uint32_t dense, Phase phase) { return (static_cast<uint64_t>(dense) << 8) | static_cast<uint8_t>(phase); }
// The key of a collective: op, dense communicator id, size class (first word), peer.
inline uint64_t collectiveKey(CollectiveOp op, uint32_t dense_comm, uint8_t size_class) {
  return (static_cast<uint64_t>(dense_comm) << 16) | (static_cast<uint64_t>(op) << 8) | size_class;
}

// A growable array of trivially copyable T that keeps its capacity and leaves new
// elements uninitialized: for scratch and history lists rewritten every record.
template <typename T>
class PodArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return buf_.get(); }
  const T* data() const { return buf_.get(); }
  T& operator[](size_t i) {
    assert(i < size_);
    return buf_[i];
  }
  const T& operator[](size_t i) const {
    assert(i < size_);
    return buf_[i];
  }
  void clear() { size_ = 0; }
  // Sets the size to n; elements past the old size are uninitialized.
  void resizeUninitialized(size_t n) {
    if (n > cap_) [[unlikely]]
      grow(n);
    size_ = n;
  }
  void push_back(const T& v) {
    resizeUninitialized(size_ + 1);
    buf_[size_ - 1] = v;
  }

 private:
  [[gnu::noinline]] void grow(size_t n) {
    size_t cap = std::max(n, 2 * cap_ + 16);
    std::unique_ptr<T[]> bigger = std::make_unique_for_overwrite<T[]>(cap);
    for (size_t i = 0; i < size_; ++i) bigger[i] = buf_[i];
    buf_ = std::move(bigger);
    cap_ = cap;
  }
  std::unique_ptr<T[]> buf_;
  size_t size_ = 0, cap_ = 0;
};

// What the next delta record is coded against: the previous record's step fields, and its
// lists with dense ids, histograms kept in one flat bucket array. Encoder and decoder keep
// two and swap them after each record, so steady state allocates nothing.
struct KernelRef {
  uint64_t signature;
  uint32_t dense;
  Phase phase;
  uint32_t count;
  int64_t total_ns;
  int64_t sketch_ns;  // DurationHistogram::sketchTotal of the histogram
  uint32_t hist_begin, hist_size;  // into History::buckets
};
inline constexpr KernelRef kNoKernel{0, 0, Phase::kUnknown, 0, 0, 0, 0, 0};  // the default entry

// Version 2's predicted total of a kernel: the previous total moved by what the histogram
// says changed. Exact when the producer stores sketch totals (total == sketchTotal), and
// the previous total when nothing changed. Wrapping arithmetic, identical on both sides.
inline int64_t predictTotalV2(const KernelRef& p, int64_t sketch_ns) { return addDelta(subWrap(sketch_ns, p.sketch_ns), p.total_ns); }

struct History {
  uint32_t rank = 0;
  uint64_t step = 0;
  uint16_t attempt = 0;
  int64_t start_ns = 0, end_ns = 0;
  std::array<int64_t, kPhaseColumnCount> phase_ns{};
  PodArray<KernelRef> kernels;
  PodArray<DurationHistogram::Bucket> buckets;  // all kernels' histograms, back to back
  PodArray<CollectiveStat> collectives;
  PodArray<uint32_t> comm_dense;  // parallel to collectives
  PodArray<StackStat> stacks;
  PodArray<uint32_t> stack_dense;  // parallel to stacks

  // Back to the all-zero record a keyframe is coded against (keeps capacity).
  void clear() {
    rank = 0;
    step = 0;
    attempt = 0;
    start_ns = end_ns = 0;
    phase_ns.fill(0);
    clearLists();
  }
  void clearLists() {
    kernels.clear();
    buckets.clear();
    collectives.clear();
    comm_dense.clear();
    stacks.clear();
    stack_dense.clear();
  }
  void setStepFields(const StepRecord& r) {
    rank = r.rank;
    step = r.step;
    attempt = r.attempt;
    start_ns = r.start_ns;
    end_ns = r.end_ns;
    phase_ns = r.phase_ns;
  }
  std::span<const DurationHistogram::Bucket> hist(const KernelRef& k) const { return {buckets.data() + k.hist_begin, k.hist_size}; }
  // Sets kernel entry i (REQUIRES: kernels sized, entries before i set).
  void setKernel(size_t i, const KernelStat& k, uint32_t dense, int64_t sketch_ns) {
    const auto& b = k.hist.buckets();
    DurationHistogram::Bucket* dst = setKernelOnly(i, k, dense, sketch_ns);
    for (size_t j = 0; j < b.size(); ++j) dst[j] = b[j];
  }
  // Same, except that the caller copies the histogram's buckets to the returned place.
  DurationHistogram::Bucket* setKernelOnly(size_t i, const KernelStat& k, uint32_t dense, int64_t sketch_ns) {
    uint32_t n = static_cast<uint32_t>(k.hist.buckets().size());
    size_t at = buckets.size();
    buckets.resizeUninitialized(at + n);
    kernels[i] = KernelRef{k.signature, dense, k.phase, k.count, k.total_ns, sketch_ns, static_cast<uint32_t>(at), n};
    return buckets.data() + at;
  }
};

// Appends bytes into an internal buffer that keeps its capacity across records.
// REQUIRES: reserve(n) before writing n bytes (asserted in debug builds).
// Bytes are stored as char8_t, which (unlike char and unsigned char) may not alias other
// objects: the compiler can keep the cursor and the caller's vector bounds in registers
// across writes.
class StepWriter {
 public:
  void clear() { p_ = buf_.get(); }
  void reserve(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) [[unlikely]]
      grow(n);
  }
  void u8(uint8_t v) {
    assert(p_ < end_);
    *p_++ = static_cast<char8_t>(v);
  }
  void varint(uint64_t v) {
    assert(p_ + varintSize(v) <= end_);
    char8_t* p = p_;
    while (v >= 0x80) {
      *p++ = static_cast<char8_t>(v | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<char8_t>(v);
    p_ = p;
  }
  void zz(int64_t v) { varint(zigzagEncode(v)); }
  void fixed64(uint64_t v) {
    assert(p_ + 8 <= end_);
    for (int i = 0; i < 8; ++i) p_[i] = static_cast<char8_t>(v >> (8 * i));
    p_ += 8;
  }
  size_t size() const { return static_cast<size_t>(p_ - buf_.get()); }
  std::string_view view() const { return std::string_view(reinterpret_cast<const char*>(buf_.get()), size()); }

 private:
  [[gnu::noinline]] void grow(size_t n) {
    size_t used = size();
    size_t cap = std::max<size_t>(2 * static_cast<size_t>(end_ - buf_.get()), used + n + 256);
    std::unique_ptr<char8_t[]> bigger(new char8_t[cap]);
    if (used) std::memcpy(bigger.get(), buf_.get(), used);
    buf_ = std::move(bigger);
    p_ = buf_.get() + used;
    end_ = buf_.get() + cap;
  }
  std::unique_ptr<char8_t[]> buf_;
  char8_t* p_ = nullptr;    // next byte to write
  char8_t* end_ = nullptr;  // end of the buffer
};

// Bounds-checked reader of one record body. Getters return false on failure, after
// recording the first error; status() turns it into Corruption naming the offset.
class StepReader {
 public:
  explicit StepReader(std::string_view in)
      : p_(reinterpret_cast<const uint8_t*>(in.data())), end_(p_ + in.size()), begin_(p_) {}

  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  size_t offset() const { return static_cast<size_t>(p_ - begin_); }
  bool atEnd() const { return p_ == end_; }
  const Status& status() const { return error_; }

  bool u8(uint8_t* v) {
    if (p_ == end_) [[unlikely]]
      return truncated();
    *v = *p_++;
    return true;
  }
  bool varint(uint64_t* v) {
    if (p_ != end_ && *p_ < 0x80) [[likely]] {
      *v = *p_++;
      return true;
    }
    if (remaining() >= 10) [[likely]]
      return varintUnchecked(v);
    return varintSlow(v);
  }
  bool zz(int64_t* v) {
    uint64_t u;
    if (!varint(&u)) return false;
    *v = zigzagDecode(u);
    return true;
  }
  // A varint that must be <= limit.
  bool boundedVarint(uint64_t* v, uint64_t limit, const char* field) {
    if (!varint(v)) return false;
    if (*v > limit) [[unlikely]]
      return failLimit(field, *v, limit);
    return true;
  }
  bool fixed64(uint64_t* v) {
    if (remaining() < 8) [[unlikely]]
      return truncated();
    uint64_t r = 0;
    for (int i = 0; i < 8; ++i) r |= static_cast<uint64_t>(p_[i]) << (8 * i);
    p_ += 8;
    *v = r;
    return true;
  }
  bool bytes(size_t n, const uint8_t** out) {
    if (remaining() < n) [[unlikely]]
      return truncated();
    *out = p_;
    p_ += n;
    return true;
  }

  // Records Corruption "step record: <what> at offset N"; returns false.
  [[gnu::cold, gnu::noinline]] bool fail(const std::string& what) {
    if (error_.isOk()) error_ = Status::corruption("step record: " + what + " at offset " + std::to_string(offset()));
    return false;
  }
  // Records an error as given; returns false.
  [[gnu::cold, gnu::noinline]] bool failWith(Status s) {
    if (error_.isOk()) error_ = std::move(s);
    return false;
  }

 private:
  [[gnu::cold, gnu::noinline]] bool truncated() {
    return failWith(Status::corruption("step record: truncated at offset " + std::to_string(offset())));
  }
  [[gnu::cold, gnu::noinline]] bool failLimit(const char* field, uint64_t v, uint64_t limit) {
    return failWith(Status::corruption(std::string("step record: ") + field + " " + std::to_string(v) + " exceeds limit " + std::to_string(limit)));
  }
  // A multi-byte varint with at least 10 bytes left: no bounds checks per byte.
  bool varintUnchecked(uint64_t* v) {
    uint64_t result = 0;
    for (int i = 0; i < 10; ++i) {
      uint64_t byte = p_[i];
      result |= (byte & 0x7f) << (7 * i);
      if (byte < 0x80) {
        if (i == 9 && byte > 1) break;  // overflow: let the slow path say so
        *v = result;
        p_ += i + 1;
        return true;
      }
    }
    return varintSlow(v);
  }
  bool varintSlow(uint64_t* v) {
    uint64_t result = 0;
    for (int shift = 0; shift <= 63; shift += 7) {
      if (p_ == end_) return truncated();
      uint8_t byte = *p_++;
      if (shift == 63 && byte > 1) return failWith(Status::corruption("step record: varint overflows 64 bits at offset " + std::to_string(offset())));
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        *v = result;
        return true;
      }
    }
    return failWith(Status::corruption("step record: varint longer than 10 bytes at offset " + std::to_string(offset())));
  }

  const uint8_t* p_;
  const uint8_t* end_;
  const uint8_t* begin_;
  Status error_;
};

}  // namespace argus::model::step_format
