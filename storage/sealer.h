// Sealer: moves head rows into chunks (DESIGN §5). A block of one rank is sealed when a
// later block of that rank exists in head (sealReady) or unconditionally (sealAll).
// Sealing merges the block's existing chunks (rows re-delivered after an earlier seal land
// in head again) with the head rows, head winning for the same (step, attempt), writes
// every chunk of the block and deletes the head rows it consumed in ONE WriteBatch, so a
// crash leaves either the old or the new state, never a row in both or neither.
#pragma once

#include <cstdint>

#include "storage/db_handles.h"

namespace argus::storage {

struct SealStats {
  uint64_t blocks = 0;     // (job, rank, block, attempt) sets written
  uint64_t head_rows = 0;  // head rows moved into chunks
  uint64_t merged = 0;     // blocks that merged an existing chunk set
};

class Sealer {
 public:
  explicit Sealer(const DbHandles& h) : h_(h) {}
  // REQUIRES: callers serialize run() (the store holds a seal mutex).
  Status run(bool all, SealStats* stats);

 private:
  struct Row;
  Status sealBlock(uint32_t job, uint32_t rank, uint64_t base, std::vector<Row>& rows, SealStats* stats);
  DbHandles h_;
};

}  // namespace argus::storage
