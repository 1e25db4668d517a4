// ChunkFetcher: reads the chunk values of a scan, which asks for the keys of each
// (column, block) range in ascending rank order (scan_cursor.h). Keys sort by
// job | table | column | step_base | rank | attempt (docs/format/keys.md), so the next key a
// scan wants from a range is almost always the entry right after the last one it read: one
// forward iterator per (column, block) reaches it with a Next() instead of the index and
// block-cache lookups of a point Get (the scan's main cost before: two Gets per rank-block).
// REQUIRES: the DB and the snapshot outlive the fetcher. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "storage/db_handles.h"
#include "storage/keys.h"

namespace argus::storage {

class ChunkFetcher {
 public:
  ChunkFetcher(const DbHandles& h, const rocksdb::Snapshot* snapshot);
  ~ChunkFetcher();

  // Points *value at the value stored at chunk key `key`; NotFound when absent. It stays
  // valid until the next get of a key in the same (column, block) range: it is the
  // range's iterator's current entry, or, past kMaxCursors ranges, a point Get's copy
  // in *buffer.
  Status get(const std::string& key, std::string* buffer, std::string_view* value);

 private:
  struct Cursor {
    std::string range;  // job | table | column | step_base: the key prefix it walks
    std::string upper;  // prefixSuccessor(range): iterate_upper_bound points here
    rocksdb::Slice upper_slice;
    std::unique_ptr<rocksdb::Iterator> it;
  };
  // The cursor over key's (column, block) range; null once kMaxCursors are open.
  Cursor* cursorFor(std::string_view key);
  Status pointGet(const std::string& key, std::string* buffer, std::string_view* value);

  // Each open iterator pins a data block and the DB's current version: past this many
  // (column, block) ranges in one scan (long step ranges), the rest fall back to Gets.
  static constexpr size_t kMaxCursors = 64;
  // How many entries an iterator steps over before it seeks instead (a gap of ranks the
  // scan skips: ranks without the block, or ranks not asked for).
  static constexpr int kMaxSteps = 8;

  DbHandles h_;
  rocksdb::ReadOptions ro_;
  std::vector<std::unique_ptr<Cursor>> cursors_;
  Cursor* last_ = nullptr;  // the cursor of the previous get: usually the next one's too
};

}  // namespace argus::storage
