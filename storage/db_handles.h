// The RocksDB handles the store's parts share (sealer, scan cursor, dump). Internal.
#pragma once

#include <cstdint>
#include <mutex>
#include <shared_mutex>

#include <rocksdb/db.h>

#include "base/status.h"
#include "storage/head_index.h"

namespace argus::storage {

// Orders writes against setRetention (M2): writers enter shared, so they still commit
// concurrently; setRetention enters exclusive while it writes the JobInfo every write also
// rewrites. The turnstile keeps a stream of overlapping writers from starving the
// exclusive side (pthread rwlocks prefer readers).
class CommitGate {
 public:
  std::shared_lock<std::shared_mutex> shared() {
    std::lock_guard t(turnstile_);
    return std::shared_lock(mu_);
  }
  std::unique_lock<std::shared_mutex> exclusive() {
    std::lock_guard t(turnstile_);
    return std::unique_lock(mu_);
  }

 private:
  std::mutex turnstile_;
  std::shared_mutex mu_;
};

struct DbHandles {
  rocksdb::DB* db = nullptr;
  rocksdb::ColumnFamilyHandle* meta = nullptr;
  rocksdb::ColumnFamilyHandle* head = nullptr;
  rocksdb::ColumnFamilyHandle* chunk = nullptr;
  HeadIndex* head_index = nullptr;  // the store's; never null once open
  uint32_t block_steps = 256;
  uint64_t blockBase(uint64_t step) const { return step - step % block_steps; }
};

// Maps a RocksDB status onto ours, with `context` prefixed.
Status fromRocks(const rocksdb::Status& s, std::string_view context);

}  // namespace argus::storage
