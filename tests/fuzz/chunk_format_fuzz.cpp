// Fuzzes storage::parseChunk (the chunk header and checksum), then the chunk's payload
// through decodeInts / decodeHists with the header's row count and no block context (as
// `argus dump` does).
//
// Input: one mode byte, then a chunk value. Mode bit 0 set: the value's last 8 bytes are
// replaced by the right checksum first, so mutations reach the header parser instead of
// dying at the checksum. Invariants: an accepted chunk re-encodes (encodeChunk) and parses
// to the same header and payload; decoded columns have the header's row count and decode
// again from their re-encoding.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "storage/chunk_format.h"
#include "storage/column_codec.h"
#include "storage/hist_codec.h"
#include "tests/fuzz/fuzz_util.h"

using namespace argus::storage;

namespace {

bool sameStats(const ChunkStats& a, const ChunkStats& b) {
  bool sum_equal = a.sum == b.sum || (std::isnan(a.sum) && std::isnan(b.sum));
  return a.rows == b.rows && a.first_step == b.first_step && a.last_step == b.last_step && a.has_min_max == b.has_min_max &&
         a.min == b.min && a.max == b.max && sum_equal && a.nan_count == b.nan_count;
}

// Payload decoding is bounded by the row count; keep each run fast.
constexpr uint64_t kMaxDecodedRows = 1 << 16;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  bool fix_checksum = data[0] & 1;
  std::string value(reinterpret_cast<const char*>(data + 1), size - 1);
  if (fix_checksum && value.size() >= 8) {
    std::string sum;
    argus::ByteWriter(&sum).putFixedLE(chunkChecksum(std::string_view(value).substr(0, value.size() - 8)), 8);
    value.replace(value.size() - 8, 8, sum);
  }

  ChunkView v;
  if (!parseChunk(value, &v).isOk()) return 0;
  FUZZ_CHECK(v.version == kChunkVersion);
  FUZZ_CHECK(v.stats.rows <= kMaxChunkRows);
  FUZZ_CHECK(v.stats.first_step <= v.stats.last_step);
  FUZZ_CHECK(v.payload.data() >= value.data() && v.payload.data() + v.payload.size() <= value.data() + value.size());

  std::string again = encodeChunk(v.type, v.codec, v.stats, v.payload);
  ChunkView w;
  FUZZ_CHECK(parseChunk(again, &w).isOk());
  FUZZ_CHECK(w.codec == v.codec && w.type == v.type && w.payload == v.payload);
  FUZZ_CHECK(sameStats(w.stats, v.stats));
  (void)codecName(v.codec);

  if (v.stats.rows > kMaxDecodedRows) return 0;
  size_t rows = static_cast<size_t>(v.stats.rows);
  if (v.type == StoredType::kHistogram) {
    HistColumn hists;
    if (!decodeHists(v.codec, v.payload, rows, nullptr, &hists).isOk()) return 0;
    FUZZ_CHECK(hists.size() == rows);
    EncodedPayload p = encodeHists(hists, nullptr);
    HistColumn back;
    FUZZ_CHECK(decodeHists(p.codec, p.bytes, rows, nullptr, &back).isOk());
    FUZZ_CHECK(back == hists);
  } else {
    std::vector<int64_t> ints;
    if (!decodeInts(v.codec, v.payload, rows, nullptr, &ints).isOk()) return 0;
    FUZZ_CHECK(ints.size() == rows);
    EncodedPayload p = encodeInts(ints, nullptr);
    std::vector<int64_t> back;
    FUZZ_CHECK(decodeInts(p.codec, p.bytes, rows, nullptr, &back).isOk());
    FUZZ_CHECK(back == ints);
  }
  return 0;
}
