// Sealer: moves head rows into chunks (DESIGN §5). A block of one rank is sealed when a
// later block of that rank exists in head (sealReady) or unconditionally (sealAll).
// Sealing merges the block's existing chunks (rows re-delivered after an earlier seal land
// in head again) with the head rows, head winning for the same (step, attempt), writes
// every chunk of the block and deletes the head rows it consumed in ONE WriteBatch, so a
// crash leaves either the old or the new state, never a row in both or neither.
//
// A block that cannot be sealed (an unreadable head row, a corrupt earlier chunk, a block
// over the per-block row cap) is logged, counted in SealStats::failed_blocks and skipped:
// its rows stay in head (scans still see them) and the pass goes on with the rest.
// The head rows are read under a snapshot; before the batch commits the sealer re-reads
// them at the latest state under the store's CommitGate (exclusive) and, when any changed
// (a re-delivery of the same key with other content), drops the batch and leaves the block
// for the next pass (SealStats::raced_blocks), so an acknowledged write is never deleted.
#pragma once

#include <cstdint>
#include <functional>
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
  uint64_t failed_blocks = 0;  // (job, rank, block)s that could not be sealed and were skipped
  uint64_t raced_blocks = 0;   // (job, rank, block)s left for the next pass: head changed under the seal
};

// Test hooks (null/defaults in production).
struct SealerTestHooks {
  // Called after a block's batch is built, before the sealer enters the commit gate.
  std::function<void(uint32_t job, uint32_t rank, uint64_t base)> before_commit;
  // Per-block row cap (kMaxChunkRows); a test lowers it to exercise the refusal cheaply.
  uint64_t max_block_rows = kMaxChunkRows;
};

// Keeps its buffers (decoded records, table blocks, the write batch) between blocks and
// between runs, so a steady seal allocates little: keep one Sealer per store.
class Sealer {
 public:
  explicit Sealer(const DbHandles& h) : h_(h) {}
  // REQUIRES: callers serialize run() (the store holds a seal mutex).
  // Never stops at a failing block: it seals everything else, then returns the first
  // failure (with the count) when any block failed, OK otherwise. Only an error of the
  // head iterator itself ends the pass early.
  Status run(bool all, SealStats* stats);
  void setTestHooks(SealerTestHooks hooks) { hooks_ = std::move(hooks); }

 private:
  // Seals the first `n` rows of keys_/records_ (one (job, rank, block), in key order).
  Status sealBlock(uint32_t job, uint32_t rank, uint64_t base, size_t n, SealStats* stats);
  // Encodes one (rank, attempt)'s records (ascending steps) into batch_.
  // Refuses (leaving batch_ partial; the caller drops it) a table block over the row cap.
  Status writeRecords(uint32_t job, uint32_t rank, uint16_t attempt, uint64_t base, std::vector<model::StepRecord*>& recs);
  // Under the commit gate: true when every head row of the block still holds what was read.
  Status headUnchanged(size_t n, bool* unchanged);

  DbHandles h_;
  std::vector<HeadKey> keys_;                // the block's head keys
  std::vector<uint64_t> hashes_;             // XXH3 of each head value as read
  std::vector<model::StepRecord> records_;  // decoded head rows; capacity reused
  TableBlock tables_[kTableCount];
  std::vector<ChunkKV> chunks_;
  CodecHints hints_;
  rocksdb::WriteBatch batch_;
  SealerTestHooks hooks_;
};

}  // namespace argus::storage
