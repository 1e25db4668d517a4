// HeadIndex: which (job, rank, block) hold live head entries, kept in memory so a scan
// finds the ranks it must read from head without seeking the head column family, and
// where in a block a read of its later steps may start.
//
// Why: sealing deletes head entries one key at a time (exact keys, invariant I2), and
// until compaction drops them a seek walks every tombstone after its target. A scan's
// skip-scan over ranks then read the job's whole sealed history (1 GB for 10,240 ranks x
// 1,000 steps) on every query.
//
// Chain starts: head keys sort a block's entries by (session, first_seq), not by step, so
// a read of a block's newest step walked and decoded every entry since the block began
// (256 steps of 10,240 ranks for each pass of the continuous diagnosis). While the entries
// of a block arrive in key order with ever later steps (one live session per rank, or
// sessions that follow each other), the index keeps, every kStartSteps steps or more, an
// entry whose first record is a keyframe: every entry before it holds earlier steps, and
// the chains from it on decode without them. A block that breaks the order (a restarted
// attempt re-sending older steps) keeps no starts and is read from its beginning; so is
// a block listed from disk at open (its order is not known) until it is sealed.
//
// The index is a superset of what any later snapshot holds in head: writers add() before
// their batch commits, the sealer and dropJob remove() after theirs has. A scan reads the
// index first and takes its snapshot after, so every head entry in its snapshot was
// committed before the read (and is listed) or after it (a write concurrent with the
// query). An entry counted twice (the same key put again) only costs a scan a seek. A
// start asked for after the snapshot is taken still holds for it: every entry in the
// snapshot was added before, and a start whose entry is not in it only moves the seek
// past keys that hold earlier steps. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

namespace argus::storage {

class HeadIndex {
 public:
  static constexpr uint64_t kStartSteps = 16;  // the least spacing of a block's chain starts

  struct Block {
    uint32_t job;
    uint32_t rank;
    uint64_t block_base;
  };
  // One entry a write adds: its key's place in the block and the steps its records hold.
  struct Entry {
    Block block;
    uint64_t session = 0, first_seq = 0;
    uint64_t min_step = 0, max_step = 0;
    bool starts_chain = false;  // its first record is a keyframe
  };
  // Where a read may start in a block: the key suffix of a chain start.
  struct Start {
    uint64_t session = 0, first_seq = 0;
  };

  // `entries` entries of a block whose keys and steps are not known (listed at open).
  void add(uint32_t job, uint32_t rank, uint64_t block_base, uint32_t entries = 1);
  // A write batch's entries, in key order within each block, under one lock.
  void add(std::span<const Entry> entries);
  // Counts below zero stop at zero (see the header comment).
  void remove(uint32_t job, uint32_t rank, uint64_t block_base, uint32_t entries);
  void dropJob(uint32_t job);
  // Ranks of `job` with live entries in a block that overlaps steps [from_step, to_step),
  // ascending. block_steps: the store's block size.
  std::vector<uint32_t> ranks(uint32_t job, uint64_t from_step, uint64_t to_step, uint32_t block_steps) const;
  // The last chain start of the block at or before `step`: a read of the block's steps from
  // `step` on may seek there. Nullopt: read the block from its beginning.
  std::optional<Start> startFor(uint32_t job, uint32_t rank, uint64_t block_base, uint64_t step) const;

  // The highest block base of `job` with live entries; nullopt when none.
  std::optional<uint64_t> lastBlock(uint32_t job) const;

  // Every block listed, in key order (job, rank, block_base): what the sealer visits.
  std::vector<Block> blocks() const;

 private:
  struct ChainStart {
    uint64_t min_step;
    Start at;
  };
  struct BlockState {
    uint32_t entries = 0;
    // Every entry added sorts after the ones added before it and holds later steps.
    bool ordered = true;
    Start last;             // the last entry's key, while ordered
    uint64_t max_step = 0;  // the latest step added, while ordered
    std::vector<ChainStart> starts;  // ascending; kept while ordered
  };
  static void addEntry(BlockState& b, const Entry& e);
  using Blocks = std::map<uint64_t, BlockState>;  // by block_base
  mutable std::mutex mu_;
  std::map<uint32_t, std::map<uint32_t, Blocks>> jobs_;  // GUARDED_BY(mu_)
};

}  // namespace argus::storage
