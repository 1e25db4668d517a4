#include "query/binder/catalog.h"

#include "storage/table_block.h"

namespace argus::query {

namespace {

// 64-bit hashes use every bit: they are IDs, not numbers.
bool isIdColumn(std::string_view name) {
  return name == "signature" || name == "communicator" || name == "stack_id" || name == "name_id";
}

const char* storeTableDescription(storage::Table t) {
  switch (t) {
    case storage::Table::kSteps: return "one row per (job, rank, step): iteration time and its phases";
    case storage::Table::kKernels: return "GPU kernels per step: signature, phase, count, total and histogram of durations";
    case storage::Table::kCollectives: return "collectives and point-to-point transfers per step: op, communicator, bytes, time, wait";
    case storage::Table::kStacks: return "sampled CPU stacks per step: stack id and samples";
    case storage::Table::kEvents: return "events per step: kind, time, value, name";
  }
  return "";
}

std::vector<TableInfo> buildCatalog() {
  std::vector<TableInfo> tables;
  TableInfo jobs;
  jobs.kind = TableInfo::Kind::kJobs;
  jobs.name = "jobs";
  jobs.description = "the store's jobs: creation, last write, retention";
  jobs.columns = {{"job", LogicalType::kVarchar},
                  {"created_ns", LogicalType::kBigInt},
                  {"last_write_ns", LogicalType::kBigInt},
                  {"retention_ns", LogicalType::kBigInt}};
  tables.push_back(std::move(jobs));
  TableInfo ranks;
  ranks.kind = TableInfo::Kind::kRanks;
  ranks.name = "ranks";
  ranks.description = "each job's topology: rank, host, device and parallel groups, as the capture sessions reported it";
  ranks.columns = {{"job", LogicalType::kVarchar}, {"rank", LogicalType::kBigInt}, {"world_size", LogicalType::kBigInt},
                   {"host", LogicalType::kVarchar}};
  for (const char* c : {"local_rank", "device", "tp_rank", "tp_size", "pp_rank", "pp_size", "dp_rank", "dp_size", "cp_rank", "cp_size",
                        "ep_rank", "ep_size"}) {
    ranks.columns.push_back({c, LogicalType::kBigInt});
  }
  tables.push_back(std::move(ranks));
  TableInfo kernel_names;
  kernel_names.kind = TableInfo::Kind::kKernelNames;
  kernel_names.name = "kernel_names";
  kernel_names.description = "each job's kernel dictionary: the normalized name and launch geometry behind a signature";
  kernel_names.columns = {{"job", LogicalType::kVarchar}, {"signature", LogicalType::kId}, {"name", LogicalType::kVarchar}};
  for (const char* c : {"grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"}) kernel_names.columns.push_back({c, LogicalType::kBigInt});
  tables.push_back(std::move(kernel_names));
  TableInfo stack_names;
  stack_names.kind = TableInfo::Kind::kStackNames;
  stack_names.name = "stack_names";
  stack_names.description = "each job's stack dictionary: the frames behind a sampled stack's id, folded root first";
  stack_names.columns = {{"job", LogicalType::kVarchar}, {"stack_id", LogicalType::kId}, {"frames", LogicalType::kVarchar},
                         {"leaf", LogicalType::kVarchar}, {"depth", LogicalType::kBigInt}};
  tables.push_back(std::move(stack_names));
  TableInfo names;
  names.kind = TableInfo::Kind::kNames;
  names.name = "names";
  names.description = "each job's string dictionary: the text behind a name id (events.name_id)";
  names.columns = {{"job", LogicalType::kVarchar}, {"name_id", LogicalType::kId}, {"name", LogicalType::kVarchar}};
  tables.push_back(std::move(names));
  for (storage::Table t : storage::kAllTables) {
    TableInfo info;
    info.kind = TableInfo::Kind::kStore;
    info.name = storage::tableName(t);
    info.description = storeTableDescription(t);
    info.table = t;
    info.columns.push_back({"job", LogicalType::kVarchar});
    for (const storage::ColumnDef& def : storage::tableColumns(t)) {
      TableColumn c;
      c.name = std::string(def.name);
      c.storage = &def;
      switch (def.type) {
        case storage::ColumnType::kHistogram: c.type = LogicalType::kHistogram; break;
        case storage::ColumnType::kUInt64: c.type = isIdColumn(def.name) ? LogicalType::kId : LogicalType::kBigInt; break;
        case storage::ColumnType::kInt64: c.type = LogicalType::kBigInt; break;
      }
      if (t == storage::Table::kCollectives && def.name == "peer_rank") {
        c.has_null_sentinel = true;
        c.null_sentinel = 0xffffffffll;  // model::CollectiveStat::kNoPeer
      }
      if (t == storage::Table::kCollectives && def.name == "wait_ns") {
        c.has_null_sentinel = true;
        c.null_sentinel = -1;  // the source does not report waiting
      }
      if (def.added_later) {  // blocks sealed before the column was stored
        c.has_null_sentinel = true;
        c.null_sentinel = def.absent;
      }
      info.columns.push_back(std::move(c));
    }
    tables.push_back(std::move(info));
  }
  return tables;
}

}  // namespace

int TableInfo::findColumn(std::string_view n) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == n) return static_cast<int>(i);
  }
  return -1;
}

const std::vector<TableInfo>& catalogTables() {
  static const std::vector<TableInfo> tables = buildCatalog();
  return tables;
}

const TableInfo* findTable(std::string_view name) {
  for (const TableInfo& t : catalogTables()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::string tableNamesText() {
  std::string out;
  for (const TableInfo& t : catalogTables()) out += (out.empty() ? "" : ", ") + t.name;
  return out;
}

}  // namespace argus::query
