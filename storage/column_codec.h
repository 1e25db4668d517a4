// Integer column codecs and the zstd wrapper shared with the histogram codec
// (docs/format/codecs.md). A chunk picks its codec after an analysis pass: every
// applicable codec encodes the values, the smallest wins, and zstd is layered on top only
// when the compressed form is smaller.
//
// All arithmetic on values is modulo 2^64 (uint64), so INT64_MIN/INT64_MAX and bit-cast
// uint64 columns round-trip exactly. Decoders treat the payload as hostile: every length
// is bounded, overruns and trailing bytes are Corruption, nothing allocates more than the
// row count (from the chunk header, itself bounded) justifies.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/status.h"
#include "model/duration_histogram.h"

namespace argus::storage {

// Do not renumber: stored in chunk headers (low 7 bits of the codec byte).
enum class CodecId : uint8_t {
  kPlain = 1,          // zigzag varint per value
  kConstant = 2,       // one zigzag varint; every row has that value
  kDelta = 3,          // first value, then zigzag varint differences
  kDeltaOfDelta = 4,   // first value, first difference, then zigzag second differences
  kDictionary = 5,     // sorted distinct values, then one index per row
  kGroupDelta = 6,     // zigzag difference from the previous row of the same group
  kLinear = 7,         // value[i] = first + i * stride: two zigzag varints
  kHistResidual = 8,   // zigzag(value - histPrediction(hist)) per row (kernels.total_ns)
  kSumResidual = 9,    // zigzag(value - sum of the schema's predictor columns) per row
  kBitPack = 10,       // smallest value, then each value's offset from it in fixed-width bits
  kPeriodic = 11,      // against the value a period of rows before, repeats as run counts
  kHistSparse = 16,    // histograms, each coded alone (hist_codec.h)
  kHistSparseGrouped = 17,  // histograms against the previous row of the same group
  kHistWindow = 18,    // dense bucket windows, per-stream zstd, last count implied (hist_codec.h)
};
// Set in the codec byte when the codec's output was zstd-compressed.
inline constexpr uint8_t kCodecZstdFlag = 0x80;
inline constexpr uint8_t kCodecIdMask = 0x7f;

const char* codecName(uint8_t codec_byte);  // "delta", "delta+zstd", "unknown(9)"

// Most rows a chunk may hold (bounds decoder allocations).
inline constexpr uint64_t kMaxChunkRows = 1u << 24;

// One histogram row in summary, from a single pass over its buckets (summarizeHists in
// hist_codec.h), which also copies the buckets back to back: the codecs and statistics
// that follow read contiguous memory instead of every row's own heap block again (those
// cache misses were most of a kernels chunk's encoding time).
struct HistRow {
  int32_t first = 0, last = -1;  // bucket index window; last < first when empty
  int32_t mode = 0;              // index of the largest count, lowest on ties; 0 when empty
  uint32_t buckets = 0;          // non-empty buckets
  size_t begin = 0;              // of its buckets in RowContext::hist_buckets
  uint64_t count = 0;            // sum of the counts
  int64_t prediction = 0;        // histPrediction()
};

// What a codec may know about a chunk's rows besides its own values: other columns of the
// same block, decoded before it (docs/format/codecs.md#context).
//   ids/count: rows grouped by a key (kernels: signature+phase). ids[i] is the dense group
//     of row i, assigned in order of first appearance, each < count. Grouped codecs code a
//     row against the previous row of its group: steps repeat, so that row predicts best.
//   counts: kernels.count per row; the histogram window codec derives the last bucket's
//     count from it (a kernel's histogram holds exactly `count` launches).
//   hists: kernels.hist per row; total_ns is coded as its residual from the histogram's
//     approximate total.
//   prediction: per row, the sum of the columns the schema says this column usually
//     equals (steps.end_ns = start_ns + iter_ns; compute_ns = forward + backward + optimizer).
//   wanted_begin/wanted_end: decoders only, the rows the reader will look at. A codec that
//     decodes each row on its own (bit-pack) decodes just those, the histogram window codec
//     stops after them and only chains through the rows before; both leave the others
//     unspecified. Readers that pass a window read nothing outside it.
// Empty members mean "not available"; a codec that needs one then does not apply.
struct RowContext {
  std::vector<uint32_t> ids;
  uint32_t count = 0;
  std::span<const int64_t> counts;
  std::span<const model::DurationHistogram> hists;
  std::span<const int64_t> prediction;
  // Optional, encoders only: summarizeHists(hists), computed once per block instead of
  // once per codec and candidate. Ignored unless its size equals hists'.
  std::span<const HistRow> hist_rows;
  std::span<const model::DurationHistogram::Bucket> hist_buckets;  // every row's, back to back
  size_t wanted_begin = 0, wanted_end = SIZE_MAX;
};

// What the analysis pass chose for one column last time. A column's best codec is stable
// from block to block and rank to rank, so the next chunks of that column are encoded with
// it directly (only that codec, zstd only if it was used) and the full analysis runs again
// every kCodecHintReuse + 1 chunks. Constant and linear are always detected first: they
// are exact and cheap. Not thread-safe: one hint per writer.
struct CodecHint {
  uint8_t codec = 0;        // last choice including kCodecZstdFlag; 0: none yet
  uint8_t variant = 0;      // the codec's own last choice (hist-window: its HistDeltaForm)
  uint32_t reuse_left = 0;  // chunks to encode with `codec` before analysing again
};
inline constexpr uint32_t kCodecHintReuse = 15;
// A choice made over fewer values says little about the next chunks and is not remembered:
// an empty block's plain encoding once became the hint for a column's full blocks after it.
inline constexpr size_t kCodecHintMinValues = 64;

struct EncodedPayload {
  uint8_t codec = 0;  // CodecId, possibly | kCodecZstdFlag
  std::string bytes;
};

// Encodes with one codec, no zstd. Returns false when the codec does not apply (constant
// over varying values, a grouped codec without groups, a histogram codec).
bool encodeIntsWith(CodecId codec, std::span<const int64_t> values, const RowContext* groups, std::string* out);

// The analysis pass: tries the applicable codecs, keeps the smallest, then zstd if it saves.
// `groups` may be null (no grouped codecs then). With a hint, reuses its choice while it
// lasts (see CodecHint) and records the analysis pass's choice in it.
EncodedPayload encodeInts(std::span<const int64_t> values, const RowContext* groups, CodecHint* hint = nullptr);

// Decodes exactly `rows` values. REQUIRES for grouped codecs: groups with ids.size() == rows
// (Corruption otherwise, since the groups come from other stored columns).
Status decodeInts(uint8_t codec_byte, std::string_view payload, size_t rows, const RowContext* groups, std::vector<int64_t>* out);

// The kHistResidual prediction of a total from a histogram: round(approxTotal()), saturated.
int64_t histPrediction(const model::DurationHistogram& h);

// Writes a varint at p; returns the end. REQUIRES: 10 bytes of room at p.
inline char* putVarint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}
inline size_t varintLen(uint64_t v) { return v < 128 ? 1 : (static_cast<size_t>(std::bit_width(v)) + 6) / 7; }
inline size_t zigzagLen(int64_t v) { return varintLen(zigzagEncode(v)); }
// Differences and sums modulo 2^64, read as int64: every codec's arithmetic, so that any
// pair of values, INT64_MIN and INT64_MAX included, round-trips.
inline int64_t wrapSub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
inline int64_t wrapAdd(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
inline char* putZigzag(char* p, int64_t v) { return putVarint(p, zigzagEncode(v)); }

// Appends to a string through a raw pointer, for the encoders' per-value loops (ByteWriter
// appends byte by byte): reserve(n) returns where to write up to n bytes, commit(end) keeps
// what was written up to `end`. REQUIRES: finish() before the string is used; until then
// it is longer than what was written.
class VarintWriter {
 public:
  explicit VarintWriter(std::string* out) : out_(out), used_(out->size()) {}
  char* reserve(size_t n) {
    if (out_->size() - used_ < n) [[unlikely]]
      out_->resize(std::max(used_ + n, 2 * out_->size()));
    return out_->data() + used_;
  }
  void commit(char* end) { used_ = static_cast<size_t>(end - out_->data()); }
  void varint(uint64_t v) { commit(putVarint(reserve(10), v)); }
  void zz(int64_t v) { varint(zigzagEncode(v)); }
  void finish() { out_->resize(used_); }

 private:
  std::string* out_;
  size_t used_;  // bytes written
};

// Compresses `raw` into *frame (replacing its contents) with a per-thread context.
// Returns false when zstd fails.
bool zstdCompress(std::string_view raw, std::string* frame, int level = 3);

// Whether a zstd frame of stored_bytes (its raw-size varint included) pays for raw_bytes:
// it must save an eighth, or 512 bytes, and never less than 256 bytes. A query decodes
// every chunk it reads, and a frame costs about a microsecond to set up however small it
// is: a few percent of a small chunk is not worth it, nor a hundred bytes of a 400-byte
// one (the kernel histograms' streams and small columns: a kernel-p99 scan spent 17% of
// its instructions in zstd), while a few percent of a large one (kernels.total_ns, ~33 KB
// a block) is most of the disk budget's margin.
bool zstdPays(size_t raw_bytes, size_t stored_bytes);

// zstd layer: replaces p->bytes with varint(raw size) + zstd frame and sets the flag when
// that pays (zstdPays). Returns whether it did.
bool applyZstdIfSmaller(EncodedPayload* p, int level = 3);
// Undoes applyZstdIfSmaller: when the flag is set, decompresses into *scratch (at most
// max_raw_bytes) and points *raw at it; otherwise *raw = payload.
Status unwrapZstd(uint8_t codec_byte, std::string_view payload, size_t max_raw_bytes, std::string* scratch, std::string_view* raw);
// unwrapZstd's second half: decompresses `frame`, which must hold exactly raw_size bytes,
// into *scratch (reusing its capacity) and points *raw at it. REQUIRES: raw_size bounded
// by the caller.
Status decompressZstd(uint64_t raw_size, std::string_view frame, std::string* scratch, std::string_view* raw);

}  // namespace argus::storage
