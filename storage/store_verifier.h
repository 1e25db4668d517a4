// verifyStore: reads every entry of a store the way its readers would and reports what does
// not hold, for `argus verify` (docs/cli/argus.md). Scans trust what writers guarantee and
// read only what a query needs, so some damage stays invisible to them: a chunk set without
// its lead chunk is not listed, a header whose steps disagree with the block's `_steps` is
// taken at its word (docs/format/chunk.md). This is the check that reads everything.
//
// Checked, each problem reported with the key it concerns:
// - meta: every job's topology and dictionaries decode;
// - head: every entry decodes through the scans' HeadDecoder, per (job, rank) in key order;
//   entries of a job id no job names;
// - chunks: every key parses and names a column of its table's schema (or a layout column);
//   every value passes its checksum and header checks, with the schema's type; every chunk
//   set (job, table, block, rank, attempt) decodes whole (ChunkReader::readBlock, every
//   stored column), and every chunk's header agrees with the set's `_steps` (first and last
//   step; rows in the steps table).
// - files: when a read fails (a block failing RocksDB's checksum), every live SST file's
//   checksums, each damaged file reported by name, level and key range; the checks then go
//   on past that range (reported as not checked).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "storage/rocks_store.h"

namespace argus::storage {

struct VerifyCounts {
  uint64_t jobs = 0;
  uint64_t head_entries = 0;
  uint64_t head_records = 0;
  uint64_t head_orphaned = 0;  // deltas whose chain start a crash lost (never acknowledged)
  uint64_t chunks = 0;
  uint64_t chunk_sets = 0;
  uint64_t chunk_bytes = 0;
  uint64_t problems = 0;
};

// Calls on_problem once per problem found (the text names the key or job); returns the
// counts. A read failure that no damaged file explains is the returned Status.
Result<VerifyCounts> verifyStore(const RocksStore& store, const std::function<void(const std::string&)>& on_problem);

}  // namespace argus::storage
