// Catalog: the tables a query can name and their columns (docs/query/language.md,
// "Tables"). The store's tables (steps, kernels, collectives, stacks, events) come from
// storage/column_batch.h's schemas with a leading `job` column; `jobs` lists the store's jobs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "query/common/types.h"
#include "storage/column_batch.h"

namespace argus::query {

struct TableColumn {
  std::string name;
  LogicalType type = LogicalType::kBigInt;
  const storage::ColumnDef* storage = nullptr;  // null for job and the metadata tables' columns (jobs, ranks, the dictionaries)
  // Stored value that means "not reported": read as NULL (collectives.peer_rank, wait_ns).
  bool has_null_sentinel = false;
  int64_t null_sentinel = 0;
};

struct TableInfo {
  enum class Kind : uint8_t { kStore, kJobs, kRanks, kKernelNames, kStackNames, kNames } kind = Kind::kStore;
  std::string name;
  std::string description;  // one line, as docs/query/language.md's "Tables and columns" has it
  storage::Table table = storage::Table::kSteps;  // kStore
  std::vector<TableColumn> columns;
  int findColumn(std::string_view name) const;  // index or -1
};

// Index of the job column in every store table.
inline constexpr size_t kJobColumn = 0;

const std::vector<TableInfo>& catalogTables();
const TableInfo* findTable(std::string_view name);
// "jobs, steps, kernels, ..." for messages.
std::string tableNamesText();

}  // namespace argus::query
