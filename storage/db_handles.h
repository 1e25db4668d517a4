// The RocksDB handles the store's parts share (sealer, scan cursor, dump). Internal.
#pragma once

#include <cstdint>
#include <mutex>
#include <shared_mutex>

#include <rocksdb/db.h>

#include "base/status.h"

namespace argus::storage {

// Orders head writes against a seal's validate-and-commit (I2): writers enter shared, so
// they still commit concurrently; the sealer enters exclusive for the short span in which
// it re-checks the head rows it read and writes its batch. The turnstile keeps a stream of
// overlapping writers from starving the exclusive side (pthread rwlocks prefer readers).
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
  uint32_t block_steps = 256;
  CommitGate* gate = nullptr;  // the store's; null only in tools that never write
  uint64_t blockBase(uint64_t step) const { return step - step % block_steps; }
};

// Maps a RocksDB status onto ours, with `context` prefixed.
Status fromRocks(const rocksdb::Status& s, std::string_view context);

}  // namespace argus::storage
