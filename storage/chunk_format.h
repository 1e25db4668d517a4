// The byte layout of one chunk value (docs/format/chunk.md): a header with the codec and
// the statistics a scan uses to skip the chunk, the codec payload, and an XXH3-64 checksum
// over everything before it. Verification happens before any field is trusted.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "storage/column_batch.h"

namespace argus::storage {

// Chunk layout version (first byte of every chunk value). Readers reject other values.
inline constexpr uint8_t kChunkVersion = 1;

// Do not renumber: stored in chunk headers.
enum class StoredType : uint8_t { kInt64 = 0, kUInt64 = 1, kHistogram = 2 };
StoredType toStoredType(ColumnType t);
ColumnType fromStoredType(StoredType t);

struct ChunkStats {
  uint64_t rows = 0;
  uint64_t first_step = 0;
  uint64_t last_step = 0;
  // min/max: signed for kInt64, unsigned (bit-cast) for kUInt64, bucket indexes for
  // histograms. sum: of values (as double; exact below 2^53), or of histogram counts.
  bool has_min_max = false;
  int64_t min = 0;
  int64_t max = 0;
  double sum = 0;
  uint64_t nan_count = 0;  // always 0 for integer columns; kept for float columns to come
  bool operator==(const ChunkStats&) const = default;
};

struct ChunkView {
  uint8_t version = 0;
  uint8_t codec = 0;
  StoredType type = StoredType::kInt64;
  ChunkStats stats;
  std::string_view payload;  // points into the value passed to parseChunk
};

// Builds a chunk value.
std::string encodeChunk(StoredType type, uint8_t codec, const ChunkStats& stats, std::string_view payload);

// Verifies the checksum, then parses the header. Corruption on any mismatch; the caller
// adds the key to the message.
Status parseChunk(std::string_view value, ChunkView* out);

uint64_t chunkChecksum(std::string_view bytes);

// The other columns of its block that a chunk's codec predicts from (RowContext), which a
// reader decodes first: group ids (from the group-key columns), the count column, the
// histogram column, the predictor's terms.
struct ChunkContext {
  bool groups = false, counts = false, hists = false, prediction = false;
  bool any() const { return groups || counts || hists || prediction; }
};
ChunkContext contextOf(const ChunkView& v);

}  // namespace argus::storage
