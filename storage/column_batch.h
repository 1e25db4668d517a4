// Tables, their columns, and ColumnBatch: the unit a scan yields (DESIGN §6 tables).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/duration_histogram.h"
#include "storage/hist_column.h"

namespace argus::storage {

// Do not renumber: stored in chunk keys.
enum class Table : uint8_t {
  kSteps = 1,
  kKernels = 2,
  kCollectives = 3,
  kStacks = 4,
  kEvents = 5,
};
const char* tableName(Table t);
bool tableFromName(std::string_view name, Table* out);

enum class ColumnType : uint8_t { kInt64, kUInt64, kHistogram };

struct ColumnDef {
  std::string_view name;
  ColumnType type;
  uint8_t id;  // stored in chunk keys; do not renumber within a table
  // A column added to the table after its first layout: blocks sealed before it have no
  // chunk of it and read `absent` in every row; never a scan's lead column (listing its
  // keys would miss those blocks).
  bool added_later = false;
  int64_t absent = 0;
};

// Columns of a table in schema order. Every table starts with rank, step, attempt.
std::span<const ColumnDef> tableColumns(Table t);
const ColumnDef* findColumn(Table t, std::string_view name);
const ColumnDef* findColumn(Table t, uint8_t id);

struct Column {
  std::string name;
  ColumnType type = ColumnType::kInt64;
  std::vector<int64_t> ints;                       // kInt64 and kUInt64 (bit-cast)
  HistColumn hists;                                // kHistogram
  size_t size() const { return type == ColumnType::kHistogram ? hists.size() : ints.size(); }
};

struct ColumnBatch {
  std::vector<Column> columns;
  size_t rows = 0;
  void clear() {
    for (auto& c : columns) { c.ints.clear(); c.hists.clear(); }
    rows = 0;
  }
};

}  // namespace argus::storage
