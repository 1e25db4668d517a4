// ChunkReader: verifies and decodes chunks back into columns and TableBlocks. Every error
// is Corruption naming the chunk's key (decoded tuple and hex), and nothing that failed to
// verify is ever returned as data.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "storage/chunk_format.h"
#include "storage/keys.h"
#include "storage/table_block.h"

namespace argus::storage {

// Points *value at the value stored at `key`; NotFound when absent. The bytes live in
// *buffer, or in storage of the getter's that stays valid until it is next asked for a key
// of the same (column, block) range (ChunkFetcher: its iterator's current entry), so a
// reader decodes the chunk in place instead of copying it first.
using ChunkGetter = std::function<Status(const std::string& key, std::string* buffer, std::string_view* value)>;

class ChunkReader {
 public:
  // Verifies and decodes one chunk value into *col (ints or hists by `type`).
  // expected_rows: the row count the block layout implies (SIZE_MAX: take the header's).
  static Status decodeColumn(std::string_view key, std::string_view value, ColumnType type, size_t expected_rows, const RowContext* groups,
                             Column* col);

  // decodeColumn of a chunk verify() has passed.
  static Status decodeVerified(std::string_view key, const ChunkView& view, ColumnType type, size_t expected_rows, const RowContext* groups,
                               Column* col);

  // Verifies a chunk (checksum, header) into *view, which points into value.
  static Status verify(std::string_view key, std::string_view value, ChunkView* view);

  // A chunk of the block the caller has already fetched and verified, so it is not read again.
  struct KnownChunk {
    uint8_t column;
    ChunkView view;  // points into storage that outlives the read
  };

  // Reads the block of (job, table, step_base, rank, attempt) named by `at` (its column is
  // ignored): the row layout, then `columns` (schema ids >= 3; null: all stored columns).
  // `known`, when given, is either the layout chunk (_steps) or, in the steps table, a stored
  // column: every chunk's header has the block's first and last step (chunk.md), so steps
  // that run without gaps (the usual block) come from that header and _steps is not read.
  // A missing _steps is NotFound for the steps table (no such block) unless `known` shows
  // the block exists, and Corruption naming the key for any other table (its block exists;
  // the layout is damaged).
  // *chunks_read counts chunk values decoded.
  // Steps outside [from_step, to_step) are not wanted: in a table of one row per step, their
  // rows of a column whose codec decodes rows one by one (bit-pack) are left 0; in a table
  // of many rows per step, their histograms are left empty.
  static Status readBlock(const ChunkKey& at, const std::vector<uint8_t>* columns, const ChunkGetter& get, TableBlock* out,
                          uint64_t* chunks_read, const KnownChunk* known = nullptr, uint64_t from_step = 0, uint64_t to_step = UINT64_MAX);
};

}  // namespace argus::storage
