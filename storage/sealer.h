// Sealer: moves head rows into chunks (DESIGN §5). A block of one rank is sealed when a
// later block of that rank exists in head (sealReady) or unconditionally (sealAll).
// Sealing merges the block's existing chunks (rows re-delivered after an earlier seal land
// in head again) with the head rows, head winning for the same (step, attempt), writes
// every chunk of the block and deletes the head rows it consumed in ONE WriteBatch, so a
// crash leaves either the old or the new state, never a row in both or neither.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <rocksdb/write_batch.h>

#include "model/step_record.h"
#include "storage/chunk_writer.h"
#include "storage/db_handles.h"
#include "storage/keys.h"
#include "storage/table_block.h"

namespace argus::storage {

struct SealStats {
  uint64_t blocks = 0;     // (job, rank, block, attempt) sets written
  uint64_t head_rows = 0;  // head rows moved into chunks
  uint64_t merged = 0;     // blocks that merged an existing chunk set
};

// Keeps its buffers (decoded records, table blocks, the write batch) between blocks and
// between runs, so a steady seal allocates little: keep one Sealer per store.
class Sealer {
 public:
  explicit Sealer(const DbHandles& h) : h_(h) {}
  // REQUIRES: callers serialize run() (the store holds a seal mutex).
  Status run(bool all, SealStats* stats);

 private:
  // Seals the first `n` rows of keys_/records_ (one (job, rank, block), in key order).
  Status sealBlock(uint32_t job, uint32_t rank, uint64_t base, size_t n, SealStats* stats);
  // Encodes one (rank, attempt)'s records (ascending steps) into batch_.
  void writeRecords(uint32_t job, uint32_t rank, uint16_t attempt, uint64_t base, std::vector<model::StepRecord*>& recs);

  DbHandles h_;
  std::vector<HeadKey> keys_;                // the block's head keys
  std::vector<model::StepRecord> records_;  // decoded head rows; capacity reused
  TableBlock tables_[kTableCount];
  std::vector<ChunkKV> chunks_;
  CodecHints hints_;
  rocksdb::WriteBatch batch_;
};

}  // namespace argus::storage
