// Sealer: moves head entries into chunks (DESIGN §5). A block of one rank is sealed when a
// later block of that rank exists in head (sealReady) or unconditionally (sealAll).
// Sealing merges the block's existing chunks (records re-delivered after an earlier seal
// land in head again) with the head records, head winning for the same (step, attempt),
// writes every chunk of the block and deletes the head entries it consumed in ONE
// WriteBatch, so a crash leaves either the old or the new state, never a record in both or
// neither.
//
// A block that cannot be sealed (an unreadable head entry, a corrupt earlier chunk, a block
// over the per-block row cap) is logged, counted in SealStats::failed_blocks and skipped:
// its entries stay in head (scans still see them) and the pass goes on with the rest.
// The entries are read under a snapshot and the batch deletes exactly the keys read. Head
// keys are never rewritten (each session has its own id), so an entry written meanwhile
// survives and the next pass merges it: an acknowledged write is never deleted unsealed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <rocksdb/write_batch.h>

#include "model/step_record.h"
#include "storage/chunk_writer.h"
#include "storage/db_handles.h"
#include "storage/head_entry.h"
#include "storage/keys.h"
#include "storage/table_block.h"

namespace argus::storage {

struct SealStats {
  uint64_t blocks = 0;     // (job, rank, block, attempt) sets written
  uint64_t head_rows = 0;  // records moved from head into chunks (duplicates counted once)
  uint64_t merged = 0;     // blocks that merged an existing chunk set
  uint64_t failed_blocks = 0;  // (job, rank, block)s that could not be sealed and were skipped
  uint64_t head_bytes = 0;     // bytes (keys and values) of the head entries deleted
  uint64_t orphaned = 0;       // unacknowledged records dropped: their chain's start was never written
};

// Test hooks (null/defaults in production).
struct SealerTestHooks {
  // Called after a block's batch is built, before it is written.
  std::function<void(uint32_t job, uint32_t rank, uint64_t base)> before_commit;
  // Per-block row cap (kMaxChunkRows); a test lowers it to exercise the refusal cheaply.
  uint64_t max_block_rows = kMaxChunkRows;
};

// Keeps its buffers (decoded records, table blocks, the write batch) between blocks and
// between runs, so a steady seal allocates little: keep one Sealer per store.
class Sealer {
 public:
  explicit Sealer(const DbHandles& h) : h_(h), head_(h.block_steps) {}
  // REQUIRES: callers serialize run() (the store holds a seal mutex).
  // Never stops at a failing block: it seals everything else, then returns the first
  // failure (with the count) when any block failed, OK otherwise. Only an error of the
  // head iterator itself ends the pass early.
  Status run(bool all, SealStats* stats);
  void setTestHooks(SealerTestHooks hooks) { hooks_ = std::move(hooks); }

 private:
  // Seals the records of head_ (the entries keys_ of one (job, rank, block)).
  Status sealBlock(uint32_t job, uint32_t rank, uint64_t base, SealStats* stats);
  // Encodes one (rank, attempt)'s records (ascending steps) into batch_.
  // Refuses (leaving batch_ partial; the caller drops it) a table block over the row cap.
  Status writeRecords(uint32_t job, uint32_t rank, uint16_t attempt, uint64_t base, std::vector<model::StepRecord*>& recs);

  DbHandles h_;
  std::vector<HeadKey> keys_;  // the block's head entries
  uint64_t keys_bytes_ = 0;    // their keys' and values' bytes
  HeadDecoder head_;           // their records; capacity reused
  TableBlock tables_[kTableCount];
  std::vector<ChunkKV> chunks_;
  CodecHints hints_;
  rocksdb::WriteBatch batch_;
  SealerTestHooks hooks_;
};

}  // namespace argus::storage
