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

class ChunkWriter {
 public:
  // Appends the chunks of block `b` of (job, rank, attempt) starting at step_base.
  // REQUIRES: b.steps non-empty and inside [step_base, step_base + block_steps).
  static void writeBlock(uint32_t job, uint32_t rank, uint16_t attempt, uint64_t step_base, const TableBlock& b,
                         std::vector<ChunkKV>* out);

  // One chunk value for an integer column (exposed for tests and tools).
  static std::string encodeIntColumn(ColumnType type, std::span<const int64_t> values, const RowContext* groups, uint64_t first_step,
                                     uint64_t last_step);
  static std::string encodeHistColumn(std::span<const model::DurationHistogram> values, const RowContext* groups, uint64_t first_step,
                                      uint64_t last_step);
};

}  // namespace argus::storage
