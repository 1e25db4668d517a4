// ChunkWriter: turns a TableBlock into chunk key/values (docs/format/chunk.md): the row
// layout (_steps, and _rows for nested tables) plus one chunk per schema column, each with
// its statistics and the codec the analysis pass picked.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/chunk_format.h"
#include "storage/table_block.h"

namespace argus::storage {

struct ChunkKV {
  std::string key;
  std::string value;
};

// One CodecHint per (table, column id): what a sealer remembers between blocks.
struct CodecHints {
  CodecHint by_column[kTableCount][256];
  CodecHint* of(Table t, uint8_t column) { return &by_column[tableIndex(t)][column]; }
};

class ChunkWriter {
 public:
  // Whether block `b` can be written so that ChunkReader reads it back: InvalidArgument
  // naming the table and the count when it holds more than `max_rows` (kMaxChunkRows)
  // steps or rows (docs/format/chunk.md, "Limits"), or a step past INT64_MAX.
  static Status checkBlock(const TableBlock& b, uint64_t max_rows = kMaxChunkRows);

  // Appends the chunks of block `b` of (job, rank, attempt) starting at step_base.
  // REQUIRES: b.steps non-empty and inside [step_base, step_base + block_steps);
  // checkBlock(b) is OK (the sealer checks first; a block over the cap would be written
  // but read back as Corruption).
  // `hints` (optional) carries each column's codec choice from block to block (CodecHint).
  static void writeBlock(uint32_t job, uint32_t rank, uint16_t attempt, uint64_t step_base, const TableBlock& b,
                         std::vector<ChunkKV>* out, CodecHints* hints = nullptr);

  // One chunk value for an integer column (exposed for tests and tools).
  static std::string encodeIntColumn(ColumnType type, std::span<const int64_t> values, const RowContext* groups, uint64_t first_step,
                                     uint64_t last_step, CodecHint* hint = nullptr);
  static std::string encodeHistColumn(std::span<const model::DurationHistogram> values, const RowContext* groups, uint64_t first_step,
                                      uint64_t last_step, CodecHint* hint = nullptr);
};

}  // namespace argus::storage
