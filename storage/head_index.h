// HeadIndex: which (job, rank, block) hold live head entries, kept in memory so a scan
// finds the ranks it must read from head without seeking the head column family.
//
// Why: sealing deletes head entries one key at a time (exact keys, invariant I2), and
// until compaction drops them a seek walks every tombstone after its target. A scan's
// skip-scan over ranks then read the job's whole sealed history (1 GB for 10,240 ranks x
// 1,000 steps) on every query.
//
// The index is a superset of what any later snapshot holds in head: writers add() before
// their batch commits, the sealer and dropJob remove() after theirs has. A scan reads the
// index first and takes its snapshot after, so every head entry in its snapshot was
// committed before the read (and is listed) or after it (a write concurrent with the
// query). An entry counted twice (the same key put again) only costs a scan a seek.
// Thread-safe.
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
  struct Block {
    uint32_t job;
    uint32_t rank;
    uint64_t block_base;
  };

  void add(uint32_t job, uint32_t rank, uint64_t block_base, uint32_t entries = 1);
  // One entry in each block, under one lock: a write batch's entries.
  void add(std::span<const Block> blocks);
  // Counts below zero stop at zero (see the header comment).
  void remove(uint32_t job, uint32_t rank, uint64_t block_base, uint32_t entries);
  void dropJob(uint32_t job);
  // Ranks of `job` with live entries in a block that overlaps steps [from_step, to_step),
  // ascending. block_steps: the store's block size.
  std::vector<uint32_t> ranks(uint32_t job, uint64_t from_step, uint64_t to_step, uint32_t block_steps) const;

  // The highest block base of `job` with live entries; nullopt when none.
  std::optional<uint64_t> lastBlock(uint32_t job) const;

  // Every block listed, in key order (job, rank, block_base): what the sealer visits.
  std::vector<Block> blocks() const;

 private:
  using Blocks = std::map<uint64_t, uint32_t>;  // block_base -> live entries
  mutable std::mutex mu_;
  std::map<uint32_t, std::map<uint32_t, Blocks>> jobs_;  // GUARDED_BY(mu_)
};

}  // namespace argus::storage
