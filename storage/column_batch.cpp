// Table schemas (DESIGN §6). Column ids are stored in chunk keys (docs/format/keys.md):
// do not renumber within a table; retired ids stay reserved. rank, step and attempt are
// virtual (they live in the keys), so their ids 0-2 never appear in a chunk key.
#include "storage/column_batch.h"

#include <array>

namespace argus::storage {
namespace {

constexpr ColumnDef kStepsColumns[] = {
    {"rank", ColumnType::kUInt64, 0},
    {"step", ColumnType::kUInt64, 1},
    {"attempt", ColumnType::kUInt64, 2},
    {"start_ns", ColumnType::kInt64, 3},
    {"end_ns", ColumnType::kInt64, 4},
    {"iter_ns", ColumnType::kInt64, 5},
    {"flags", ColumnType::kUInt64, 6},
    // The ten phase columns, in model::PhaseColumn order: id = 7 + PhaseColumn.
    {"forward_ns", ColumnType::kInt64, 7},
    {"backward_ns", ColumnType::kInt64, 8},
    {"optimizer_ns", ColumnType::kInt64, 9},
    {"data_wait_ns", ColumnType::kInt64, 10},
    {"compute_ns", ColumnType::kInt64, 11},
    {"comm_total_ns", ColumnType::kInt64, 12},
    {"comm_exposed_ns", ColumnType::kInt64, 13},
    {"gpu_idle_ns", ColumnType::kInt64, 14},
    {"bubble_ns", ColumnType::kInt64, 15},
    {"launch_gap_ns", ColumnType::kInt64, 16},
    // model::commTransferNs; -1 in blocks sealed before it was stored (format 2, Dec 2026).
    {"comm_transfer_ns", ColumnType::kInt64, 17, true, -1},
};

constexpr ColumnDef kKernelsColumns[] = {
    {"rank", ColumnType::kUInt64, 0},
    {"step", ColumnType::kUInt64, 1},
    {"attempt", ColumnType::kUInt64, 2},
    {"signature", ColumnType::kUInt64, 3},
    {"phase", ColumnType::kUInt64, 4},
    {"count", ColumnType::kUInt64, 5},
    {"total_ns", ColumnType::kInt64, 6},
    {"hist", ColumnType::kHistogram, 7},
};

constexpr ColumnDef kCollectivesColumns[] = {
    {"rank", ColumnType::kUInt64, 0},
    {"step", ColumnType::kUInt64, 1},
    {"attempt", ColumnType::kUInt64, 2},
    {"op", ColumnType::kUInt64, 3},
    {"communicator", ColumnType::kUInt64, 4},
    {"size_class", ColumnType::kUInt64, 5},
    {"peer_rank", ColumnType::kUInt64, 6},
    {"count", ColumnType::kUInt64, 7},
    {"bytes", ColumnType::kUInt64, 8},
    {"total_ns", ColumnType::kInt64, 9},
    {"wait_ns", ColumnType::kInt64, 10},
};

constexpr ColumnDef kStacksColumns[] = {
    {"rank", ColumnType::kUInt64, 0},
    {"step", ColumnType::kUInt64, 1},
    {"attempt", ColumnType::kUInt64, 2},
    {"stack_id", ColumnType::kUInt64, 3},
    {"samples", ColumnType::kUInt64, 4},
};

constexpr ColumnDef kEventsColumns[] = {
    {"rank", ColumnType::kUInt64, 0},
    {"step", ColumnType::kUInt64, 1},
    {"attempt", ColumnType::kUInt64, 2},
    {"kind", ColumnType::kUInt64, 3},
    {"ts_ns", ColumnType::kInt64, 4},
    {"value", ColumnType::kUInt64, 5},
    {"name_id", ColumnType::kUInt64, 6},
};

}  // namespace

const char* tableName(Table t) {
  switch (t) {
    case Table::kSteps: return "steps";
    case Table::kKernels: return "kernels";
    case Table::kCollectives: return "collectives";
    case Table::kStacks: return "stacks";
    case Table::kEvents: return "events";
  }
  return "unknown";
}

bool tableFromName(std::string_view name, Table* out) {
  for (Table t : {Table::kSteps, Table::kKernels, Table::kCollectives, Table::kStacks, Table::kEvents}) {
    if (name == tableName(t)) {
      *out = t;
      return true;
    }
  }
  return false;
}

std::span<const ColumnDef> tableColumns(Table t) {
  switch (t) {
    case Table::kSteps: return kStepsColumns;
    case Table::kKernels: return kKernelsColumns;
    case Table::kCollectives: return kCollectivesColumns;
    case Table::kStacks: return kStacksColumns;
    case Table::kEvents: return kEventsColumns;
  }
  return {};
}

const ColumnDef* findColumn(Table t, std::string_view name) {
  for (const ColumnDef& c : tableColumns(t)) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

const ColumnDef* findColumn(Table t, uint8_t id) {
  for (const ColumnDef& c : tableColumns(t)) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

}  // namespace argus::storage
