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

PhysicalOperatorPtr makeKernelNamesScan(QueryContext& ctx, const storage::Store& store, const std::vector<size_t>& column_ids,
                                const ScanPredicates& p) {
  std::vector<std::vector<Value>> rows;
  for (const storage::JobInfo& j : jobsByName(store, p)) {
    ctx.check();
    auto names = store.kernelNames(j.name);
    if (!present(names, "the kernel dictionary", j)) continue;
    for (const model::KernelDictEntry& e : *names) {
      const model::LaunchGeometry& g = e.geometry;
      std::vector<Value> row = {Value::varchar(j.name), Value::id(e.signature), Value::varchar(e.name)};
      for (uint32_t v : {g.grid_x, g.grid_y, g.grid_z, g.block_x, g.block_y, g.block_z}) row.push_back(Value::bigint(v));
      rows.push_back(std::move(row));
    }
  }
  return rowsOf(ctx, "KERNEL_NAMES_SCAN", "kernel_names", std::move(rows), column_ids, p);
}

}  // namespace argus::query
