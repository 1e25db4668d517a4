// RocksScanCursor: a scan over head entries and sealed chunks under one RocksDB snapshot.
//
// Plan: on construction the cursor lists the ranks with data in the step range (the chunk
// keys of the table's lead column, and the store's head index) and, per rank, the chunk sets
// (block, attempt). next() then walks rank by rank and block by block: it reads the block's
// chunk sets (skipping a set whose statistics miss the step range), the rank's head records
// of that block, and for each step keeps the highest attempt (head winning a tie).
//
// The lead column is the stored column of lowest id the scan reads, in the steps table, and
// the layout chunk (_steps) otherwise. A steps-table chunk's header holds its block's first and
// last step and its row count, which is the whole layout of a block without gaps: the
// listing's entry is then the column's value itself, and a rank-block costs one RocksDB step
// per column read, not one more for _steps. Sets are written whole and deleted with their
// job (chunk.md), so any column's keys list them.
// REQUIRES: the store outlives the cursor.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "storage/chunk_fetcher.h"
#include "storage/db_handles.h"
#include "storage/head_entry.h"
#include "storage/store.h"
#include "storage/table_block.h"

namespace argus::storage {

class RocksScanCursor final : public ScanCursor {
 public:
  // `columns`: the resolved output columns, in output order.
  RocksScanCursor(const DbHandles& h, uint32_t job, ScanSpec spec, std::vector<const ColumnDef*> columns);
  ~RocksScanCursor() override;

  // Plans the scan; with threads > 1, lists many ranks' chunks on up to that many threads.
  Status init(size_t threads = 1);
  Status next(ColumnBatch* batch, bool* has_rows) override;
  const ScanStats& stats() const override { return stats_; }

  // Parallel scans (parallel_scan_cursor.h). The ranks init() planned, in output order.
  size_t rankCount() const { return plan_ ? plan_->ranks.size() : 0; }
  size_t batchRows() const { return spec_.batch_rows; }
  // About how many steps of the range each planned rank holds (at least 1).
  uint64_t stepsPerRank() const;
  // A cursor over this one's plan and snapshot (REQUIRES: init() succeeded; this cursor
  // outlives it), yielding nothing until setRanks. Its own reads, buffers and stats.
  std::unique_ptr<RocksScanCursor> worker() const;
  // Restarts at planned rank `first`; next() ends (has_rows false) after rank last - 1.
  void setRanks(size_t first, size_t last);

 private:
  struct ChunkSet {
    uint64_t base;
    uint16_t attempt;
    // Its lead chunk's value, kept from the listing in ScanPlan::leads: the listing has it in
    // hand, and fetching it again per block was a second RocksDB step per rank-block.
    // lead_len 0: not kept (past ScanSpec::plan_bytes), read again.
    uint32_t lead_len;
    const char* lead;
  };
  struct Source {  // one chunk set or one attempt's head records of a block
    TableBlock block;
    uint16_t attempt;
    bool head;
    std::vector<size_t> offsets;  // block.rowOffsets(), for nested tables only
    // The first row of the block's step i (i == steps.size(): the row count).
    size_t rowOf(size_t i) const { return isNestedTable(block.table) ? offsets[i] : i; }
  };
  struct RankPlan {
    uint32_t rank;
    uint32_t first_set = 0, set_count = 0;  // its sets in ScanPlan::sets
    bool in_head = false;                   // the head index listed the rank in range (head_index.h)
  };
  // The lead chunk values one listing thread kept: views into the data blocks its iterators
  // pinned (ReadOptions::pin_data keeps the block of a plain value, as every chunk is, alive
  // as long as the iterator), so none is copied (a copy of each cost ~13% of a short scan
  // over many ranks). Blocks cost about the values they hold: `bytes`, within plan_bytes.
  struct LeadValues {
    std::vector<std::unique_ptr<rocksdb::Iterator>> pinning;
    size_t bytes = 0;
  };
  // Flat, a few allocations in all: a map of ranks with a vector and a string each cost
  // ~3,000 instructions per rank-block listed, on the thread that plans before any reads.
  struct ScanPlan {
    std::vector<RankPlan> ranks;  // ascending
    std::vector<ChunkSet> sets;   // by rank, then (base, attempt)
    std::vector<LeadValues> leads;  // the sets' kept lead chunk values, one per listing thread
  };
  struct Listed {  // a chunk set as the listing meets it: by (base, rank, attempt)
    uint32_t rank;
    ChunkSet set;
  };
  static bool byRank(const Listed& a, const Listed& b) { return a.rank < b.rank; }

  // Lists the chunk sets in range into *out by (rank, base, attempt), their lead values
  // into plan->leads.
  Status discoverChunkSets(size_t threads, std::vector<Listed>* out, ScanPlan* plan);
  // Appends the chunk sets of ranks [lo, hi) in range to *out, by (rank, base, attempt),
  // keeping their lead values in *leads while they fit in *keep_bytes (less what it keeps).
  // Each set is taken from *sets_left, which the listing threads share (in quotas of
  // kListingQuota, the unused part given back): ResourceExhausted once it is spent, so the
  // plan's bound holds for the threads' sets together, not for an even share of it per
  // thread (one range of ranks can hold far more sets than another).
  Status listRanks(uint32_t lo, uint64_t hi, std::atomic<size_t>* sets_left, size_t* keep_bytes, std::vector<Listed>* out,
                   LeadValues* leads) const;
  static constexpr size_t kListingQuota = 64;
  // How many chunk sets a plan within ScanSpec::max_plan_bytes can list.
  size_t maxListedSets() const;
  // Listing threads each take at least this many ranks (fewer: one thread lists them).
  static constexpr uint64_t kRanksPerListingThread = 512;
  std::span<const ChunkSet> setsOf(const RankPlan& p) const { return {plan_->sets.data() + p.first_set, p.set_count}; }
  Status loadHeadRows(const RankPlan& plan);
  // A cleared source from source_pool_, appended to sources_.
  Source& takeSource();
  // Emits the rows of block `base` of the current rank into pending_.
  Status emitBlock(const RankPlan& plan, uint64_t base, size_t* set_ix);
  // Appends the rows of src's steps [first, last) to pending_.
  void appendRun(uint32_t rank, Source& src, size_t first, size_t last);
  bool wantRank(uint32_t rank) const;

  DbHandles h_;
  uint32_t job_;
  ScanSpec spec_;
  std::vector<const ColumnDef*> columns_;
  std::vector<uint8_t> stored_ids_;  // schema ids (>= 3) the output needs
  uint8_t lead_column_;              // whose keys the listing walks (see above)
  const rocksdb::Snapshot* snapshot_ = nullptr;
  rocksdb::ReadOptions ro_;
  std::unique_ptr<ChunkFetcher> chunks_;  // reads chunk values under snapshot_
  ScanStats stats_;

  bool owns_snapshot_ = true;  // workers share their planner's
  std::shared_ptr<const ScanPlan> plan_;  // set by init(), then read-only
  size_t rank_ix_ = 0;
  size_t last_rank_ix_ = 0;  // next() stops before this rank
  // Within the current rank: head records in range, and the blocks left to visit.
  HeadDecoder head_;
  std::vector<model::StepRecord*>* head_rows_ = nullptr;  // head_.sorted()
  const std::vector<HeadDecoder::RowsAt>* head_light_rows_ = nullptr;  // head_.sortedRows(): a light table's
  // The head iterator all ranks share, and its upper bound: the current rank's end.
  std::string head_bound_;
  rocksdb::Slice head_upper_;
  std::unique_ptr<rocksdb::Iterator> head_it_;
  std::vector<uint64_t> blocks_;
  size_t block_ix_ = 0;
  size_t set_ix_ = 0;
  bool rank_started_ = false;

  // The current block's sources (into source_pool_, whose buffers blocks reuse), and the key
  // and (when not kept in the plan) value of its lead chunk.
  std::vector<Source*> sources_;
  std::vector<std::unique_ptr<Source>> source_pool_;
  std::string lead_key_;
  std::string lead_buffer_;

  ColumnBatch pending_;
};

}  // namespace argus::storage
