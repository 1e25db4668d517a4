// The RocksDB handles the store's parts share (sealer, scan cursor, dump). Internal.
#pragma once

#include <cstdint>

#include <rocksdb/db.h>

#include "base/status.h"

namespace argus::storage {

struct DbHandles {
  rocksdb::DB* db = nullptr;
  rocksdb::ColumnFamilyHandle* meta = nullptr;
  rocksdb::ColumnFamilyHandle* head = nullptr;
  rocksdb::ColumnFamilyHandle* chunk = nullptr;
  uint32_t block_steps = 256;
  uint64_t blockBase(uint64_t step) const { return step - step % block_steps; }
};

// Maps a RocksDB status onto ours, with `context` prefixed.
Status fromRocks(const rocksdb::Status& s, std::string_view context);

}  // namespace argus::storage
