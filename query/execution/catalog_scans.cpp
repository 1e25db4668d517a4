#include "query/execution/catalog_scans.h"

#include <algorithm>

#include "query/binder/catalog.h"
#include "query/common/errors.h"
#include "query/execution/rows_source.h"

namespace argus::query {

namespace {

PhysicalOperatorPtr rowsOf(QueryContext& ctx, const char* label, const char* table, std::vector<std::vector<Value>> rows,
                           const std::vector<size_t>& column_ids, const ScanPredicates& p) {
  const TableInfo& t = *findTable(table);
  std::vector<std::string> names;
  std::vector<LogicalType> types;
  for (const TableColumn& c : t.columns) {
    names.push_back(c.name);
    types.push_back(c.type);
  }
  return std::make_unique<RowsSource>(ctx, std::string(label) + " " + describePredicates(p, t.findColumn("rank") >= 0, false), names, types, std::move(rows), column_ids);
}

// The jobs p selects, in name order.
std::vector<storage::JobInfo> jobsByName(const storage::Store& store, const ScanPredicates& p) {
  std::vector<storage::JobInfo> jobs = store.listJobs();
  std::erase_if(jobs, [&](const storage::JobInfo& j) { return !p.selectsJob(j.name); });
  std::sort(jobs.begin(), jobs.end(), [](const storage::JobInfo& a, const storage::JobInfo& b) { return a.name < b.name; });
  return jobs;
}

// False when the job was dropped since the listing; throws on any other failure.
template <typename T>
bool present(const Result<T>& r, const char* what, const storage::JobInfo& job) {
  if (r.isOk()) return true;
  if (r.status().isNotFound()) return false;
  throw ExecutionError(std::string("reading ") + what + " of job '" + job.name + "': " + r.status().toString());
}

}  // namespace

PhysicalOperatorPtr makeJobsScan(QueryContext& ctx, const storage::Store& store, const std::vector<size_t>& column_ids,
                                const ScanPredicates& p) {
  std::vector<std::vector<Value>> rows;
  for (const storage::JobInfo& j : jobsByName(store, p)) {
    rows.push_back({Value::varchar(j.name), Value::bigint(j.created_ns), Value::bigint(j.last_write_ns), Value::bigint(j.retention_ns)});
  }
  return rowsOf(ctx, "JOBS_SCAN", "jobs", std::move(rows), column_ids, p);
}

PhysicalOperatorPtr makeRanksScan(QueryContext& ctx, const storage::Store& store, const std::vector<size_t>& column_ids,
                                const ScanPredicates& p) {
  std::vector<std::vector<Value>> rows;
  for (const storage::JobInfo& j : jobsByName(store, p)) {
    ctx.check();
    auto topology = store.topology(j.name);
    if (!present(topology, "the topology", j)) continue;
    std::sort(topology->begin(), topology->end(), [](const model::RankTopology& a, const model::RankTopology& b) { return a.rank < b.rank; });
    for (const model::RankTopology& r : *topology) {
      if (!p.selectsRank(r.rank)) continue;
      std::vector<Value> row = {Value::varchar(j.name), Value::bigint(r.rank), Value::bigint(r.world_size), Value::varchar(r.host)};
      for (uint32_t v : {r.local_rank, r.device, r.tp_rank, r.tp_size, r.pp_rank, r.pp_size, r.dp_rank, r.dp_size, r.cp_rank, r.cp_size,
                         r.ep_rank, r.ep_size}) {
        row.push_back(Value::bigint(v));
      }
      rows.push_back(std::move(row));
    }
  }
  return rowsOf(ctx, "RANKS_SCAN", "ranks", std::move(rows), column_ids, p);
}

namespace {

// One row per entry of each selected job's dictionary (`read` returns it), by `row`.
template <typename Read, typename Row>
std::vector<std::vector<Value>> dictionaryRows(QueryContext& ctx, const storage::Store& store, const ScanPredicates& p, const char* what,
                                               Read read, Row row) {
  std::vector<std::vector<Value>> rows;
  for (const storage::JobInfo& j : jobsByName(store, p)) {
    ctx.check();
    auto entries = read(j.name);
    if (!present(entries, what, j)) continue;
    for (const auto& e : *entries) rows.push_back(row(j.name, e));
  }
  return rows;
}

}  // namespace

PhysicalOperatorPtr makeKernelNamesScan(QueryContext& ctx, const storage::Store& store, const std::vector<size_t>& column_ids,
                                        const ScanPredicates& p) {
  auto rows = dictionaryRows(ctx, store, p, "the kernel dictionary", [&](const std::string& job) { return store.kernelNames(job); },
                             [](const std::string& job, const model::KernelDictEntry& e) {
                               const model::LaunchGeometry& g = e.geometry;
                               std::vector<Value> row = {Value::varchar(job), Value::id(e.signature), Value::varchar(e.name)};
                               for (uint32_t v : {g.grid_x, g.grid_y, g.grid_z, g.block_x, g.block_y, g.block_z}) row.push_back(Value::bigint(v));
                               return row;
                             });
  return rowsOf(ctx, "KERNEL_NAMES_SCAN", "kernel_names", std::move(rows), column_ids, p);
}

PhysicalOperatorPtr makeStackNamesScan(QueryContext& ctx, const storage::Store& store, const std::vector<size_t>& column_ids,
                                       const ScanPredicates& p) {
  auto rows = dictionaryRows(ctx, store, p, "the stack dictionary", [&](const std::string& job) { return store.stackNames(job); },
                             [](const std::string& job, const model::StackDictEntry& e) {
                               // Folded, root first (the flame-graph convention); stored leaf first.
                               std::string folded;
                               for (auto f = e.frames.rbegin(); f != e.frames.rend(); ++f) {
                                 if (!folded.empty()) folded += ';';
                                 folded += *f;
                               }
                               return std::vector<Value>{Value::varchar(job), Value::id(e.stack_id), Value::varchar(std::move(folded)),
                                                         Value::varchar(e.frames.empty() ? "" : e.frames.front()),
                                                         Value::bigint(static_cast<int64_t>(e.frames.size()))};
                             });
  return rowsOf(ctx, "STACK_NAMES_SCAN", "stack_names", std::move(rows), column_ids, p);
}

PhysicalOperatorPtr makeNamesScan(QueryContext& ctx, const storage::Store& store, const std::vector<size_t>& column_ids,
                                  const ScanPredicates& p) {
  auto rows = dictionaryRows(ctx, store, p, "the string dictionary", [&](const std::string& job) { return store.names(job); },
                             [](const std::string& job, const model::StringDictEntry& e) {
                               return std::vector<Value>{Value::varchar(job), Value::id(e.id), Value::varchar(e.text)};
                             });
  return rowsOf(ctx, "NAMES_SCAN", "names", std::move(rows), column_ids, p);
}

}  // namespace argus::query
