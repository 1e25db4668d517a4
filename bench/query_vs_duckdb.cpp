// bench_query_vs_duckdb: Argus's query engine and DuckDB side by side on the same rows
// (issue 5). Run it through bench/query_vs_duckdb.sh, which builds it and installs DuckDB.
//
//   bench_query_vs_duckdb duckdb="node .../run_queries.mjs" [ranks=10240] [steps=1000] [runs=7]
//       [kernel_steps=K] [signatures=4] [dir=/tmp/argus-vs-duckdb] [keep=0]
//
// 1. Generates a store (simulate/synthetic_steps, fixed seed): `steps` rows for ranks x
//    steps, `kernels` rows (with their histograms) for the last kernel_steps steps only,
//    written through Store::write and sealed. The kernel query reads the last 100 steps;
//    K, the default, is every step of the blocks those lie in (steps 768-999 of 1,000), so
//    the blocks it decodes are as full as in a store with every step's kernels (a block of
//    only the queried steps decodes 100 steps' rows where a real one decodes 232).
// 2. Scans the store back and exports the columns the queries read as CSV (DuckDB reads
//    it with explicit column types): steps.csv (rank, step, iter_ns, compute_ns) and
//    kernel_buckets.csv, one row per (rank, step, kernel, histogram bucket) with the
//    bucket's count, plus buckets.csv (bucket index -> representative ns).
// 3. Runs each query once to warm up, then `runs` times, on the embedded engine (a scan
//    thread per core), then `runs` times on one thread (one core's values per second, the
//    target's measure); then hands the DuckDB side of every query to the node script (threads = 2,
//    the same warm-up) and reads back its median latencies (JSON on stdout) and answers
//    (CSV files).
// 4. Compacts the store (RocksStore::compactAll) and runs the engine's side again: the
//    first figures are the store as sealing left it, the second what it settles to.
// 5. Compares the answers (row counts; values within 1e-9 relative) and prints one table.
//    Exits 1 on a mismatch or a failure; a query the engine refuses (parser or binder
//    error) where that is allowed prints "unsupported: <error>" and does not fail.
//
// The kernel p99 is the same computation on both sides, not an exact quantile: the store
// keeps histograms (DurationHistogram, 1% relative error), not durations. Argus merges the
// rank's sketches (hist_merge) and takes quantile(h, 0.99): the representative of the
// first bucket whose running count exceeds 0.99 * (n - 1). DuckDB sums the exported
// bucket counts per (rank, bucket) and applies the same rule with window sums.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "base/worker_threads.h"
#include "bench/query_store.h"
#include "model/duration_histogram.h"
#include "query/common/errors.h"
#include "query/engine.h"
#include "storage/rocks_store.h"
#include "storage/store.h"

using namespace argus;

namespace {

using Rows = std::vector<std::vector<double>>;  // NULL as NaN

struct BenchQuery {
  std::string name;
  std::string argus_sql;
  std::string duckdb_sql;
  double target_s = 0;       // latency target; 0: none beyond the scan rate
  bool may_refuse = false;   // the engine may not support it yet (window functions)
};

constexpr double kValuesTargetPerCoreS = 100e6;

// Buffered CSV writer: numbers through to_chars, one fwrite per MiB.
class CsvFile {
 public:
  explicit CsvFile(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "w")) {
    if (!f_) fail("open");
  }
  ~CsvFile() { close(); }
  void field(int64_t v) {
    char tmp[24];
    auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    append(tmp, r.ptr);
  }
  void field(double v) {
    char tmp[32];
    auto r = std::to_chars(tmp, tmp + sizeof tmp, v);  // shortest text that reads back exactly
    append(tmp, r.ptr);
  }
  void endRow() {
    buf_.back() = '\n';
    if (buf_.size() >= (1u << 20)) flush();
  }
  void close() {
    if (!f_) return;
    flush();
    if (std::fclose(f_) != 0) fail("close");
    f_ = nullptr;
  }

 private:
  void append(const char* b, const char* e) {
    buf_.append(b, e);
    buf_.push_back(',');
  }
  void flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size()) fail("write");
    buf_.clear();
  }
  [[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "%s %s failed\n", what, path_.c_str());
    std::exit(1);
  }
  std::string path_;
  std::FILE* f_;
  std::string buf_;
};

// Calls fn(batch) for every batch of the scan; exits 1 on a store error.
template <typename Fn>
void scanAll(const storage::Store& store, const storage::ScanSpec& spec, Fn&& fn) {
  auto cursor = store.scan(spec);
  if (!cursor.isOk()) {
    std::fprintf(stderr, "scan: %s\n", cursor.status().toString().c_str());
    std::exit(1);
  }
  storage::ColumnBatch batch;
  for (bool has = true;;) {
    Status st = (*cursor)->next(&batch, &has);
    if (!st.isOk()) {
      std::fprintf(stderr, "scan: %s\n", st.toString().c_str());
      std::exit(1);
    }
    if (!has) return;
    fn(batch);
  }
}

// Writes the CSV files DuckDB loads (see the top of the file). Returns the rows written.
uint64_t exportRows(const storage::Store& store, const std::string& job, uint64_t kernels_from, const std::string& dir) {
  uint64_t written = 0;
  storage::ScanSpec steps;
  steps.job = job;
  steps.columns = {"rank", "step", "iter_ns", "compute_ns"};
  CsvFile steps_csv(dir + "/steps.csv");
  scanAll(store, steps, [&](const storage::ColumnBatch& b) {
    for (size_t i = 0; i < b.rows; ++i) {
      for (const storage::Column& c : b.columns) steps_csv.field(c.ints[i]);
      steps_csv.endRow();
    }
    written += b.rows;
  });
  steps_csv.close();

  storage::ScanSpec kernels;
  kernels.job = job;
  kernels.table = storage::Table::kKernels;
  kernels.from_step = kernels_from;
  kernels.columns = {"rank", "step", "hist"};
  CsvFile kernels_csv(dir + "/kernel_buckets.csv");
  scanAll(store, kernels, [&](const storage::ColumnBatch& b) {
    for (size_t i = 0; i < b.rows; ++i) {
      for (const model::DurationHistogram::Bucket& bucket : b.columns[2].hists[i].buckets()) {
        kernels_csv.field(b.columns[0].ints[i]);
        kernels_csv.field(b.columns[1].ints[i]);
        kernels_csv.field(int64_t{bucket.index});
        kernels_csv.field(int64_t{bucket.count});
        kernels_csv.endRow();
        ++written;
      }
    }
  });
  kernels_csv.close();

  CsvFile buckets_csv(dir + "/buckets.csv");
  for (int32_t i = 0; i <= model::DurationHistogram::kMaxIndex; ++i) {
    buckets_csv.field(int64_t{i});
    buckets_csv.field(model::DurationHistogram::valueOf(i));
    buckets_csv.endRow();
  }
  buckets_csv.close();
  return written;
}

// The kernel p99 reads this many of the last steps.
constexpr int kKernelQuerySteps = 100;

std::vector<BenchQuery> benchQueries(int steps) {
  auto n = [](long v) { return std::to_string(std::max(0L, v)); };
  const std::string avg_from = n(steps / 2), avg_to = n(steps / 2 + 60);
  const std::string roll_from = n(steps - 200), kern_from = n(steps - kKernelQuerySteps), last = n(steps - 1);
  const std::string rolling = "median(iter_ns) OVER (PARTITION BY rank ORDER BY step ROWS BETWEEN 20 PRECEDING AND CURRENT ROW)";
  const std::string p99_rule =  // DDSketch's rank rule, as DurationHistogram::quantile has it
      "WITH per AS (SELECT rank, bucket, sum(n) AS n FROM kernel_buckets WHERE step BETWEEN " + kern_from + " AND " + last +
      " GROUP BY rank, bucket), "
      "cum AS (SELECT rank, bucket, sum(n) OVER (PARTITION BY rank ORDER BY bucket) AS seen, sum(n) OVER (PARTITION BY rank) AS total FROM per) "
      "SELECT c.rank, b.value AS p99 FROM (SELECT rank, min(bucket) AS bucket FROM cum WHERE seen > 0.99 * (total - 1) GROUP BY rank) c "
      "JOIN buckets b USING (bucket)";
  return {
      {"per-step max, median of iter_ns", "SELECT step, max(iter_ns), median(iter_ns) FROM steps WHERE job = 'bench' GROUP BY step",
       "SELECT step, max(iter_ns), median(iter_ns) FROM steps GROUP BY step", 0.1, false},
      {"avg compute per rank, 61 steps, top 5",
       "SELECT rank, avg(compute_ns) AS c FROM steps WHERE job = 'bench' AND step BETWEEN " + avg_from + " AND " + avg_to +
           " GROUP BY rank ORDER BY c DESC, rank LIMIT 5",
       "SELECT rank, avg(compute_ns) AS c FROM steps WHERE step BETWEEN " + avg_from + " AND " + avg_to + " GROUP BY rank ORDER BY c DESC, rank LIMIT 5",
       0.01, false},
      {"rolling 21-step median per rank, 200 steps",
       "SELECT rank, step, " + rolling + " FROM steps WHERE job = 'bench' AND step BETWEEN " + roll_from + " AND " + last,
       "SELECT rank, step, " + rolling + " FROM steps WHERE step BETWEEN " + roll_from + " AND " + last, 0, true},
      {"kernel p99 per rank, " + std::to_string(kKernelQuerySteps) + " steps",
       "SELECT rank, quantile(hist_merge(hist), 0.99) FROM kernels WHERE job = 'bench' AND step BETWEEN " + kern_from + " AND " + last +
           " GROUP BY rank",
       p99_rule, 0, false},
  };
}

double cell(const query::Value& v) {
  if (v.isNull()) return NAN;
  switch (v.type()) {
    case query::LogicalType::kBigInt: return static_cast<double>(v.bigintValue());
    case query::LogicalType::kDouble: return v.doubleValue();
    default:
      std::fprintf(stderr, "BUG: the bench's queries return numbers only, got %s\n", v.toSql().c_str());
      std::exit(1);
  }
}

Rows rowsOf(const query::QueryResult& r) {
  Rows rows(r.rows);
  for (size_t i = 0; i < r.rows; ++i) {
    for (size_t c = 0; c < r.columns.size(); ++c) rows[i].push_back(cell(r.value(i, c)));
  }
  return rows;
}

Rows readCsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot read DuckDB's answer %s\n", path.c_str());
    std::exit(1);
  }
  Rows rows;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<double>& row = rows.emplace_back();
    std::stringstream fields(line);
    std::string f;
    while (std::getline(fields, f, ',')) row.push_back(f.empty() ? NAN : std::strtod(f.c_str(), nullptr));
  }
  return rows;
}

// Empty when the answers agree, else what differs. Rows are compared as sorted sets: the
// group and window queries have no ORDER BY, and the top 5 is ordered by its values.
std::string compare(Rows a, Rows b) {
  if (a.size() != b.size()) return std::to_string(a.size()) + " rows against " + std::to_string(b.size());
  auto less = [](const std::vector<double>& x, const std::vector<double>& y) {
    return std::lexicographical_compare(x.begin(), x.end(), y.begin(), y.end(), [](double p, double q) { return p < q || (!std::isnan(p) && std::isnan(q)); });
  };
  std::sort(a.begin(), a.end(), less);
  std::sort(b.begin(), b.end(), less);
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return "row " + std::to_string(i) + ": column counts differ";
    for (size_t c = 0; c < a[i].size(); ++c) {
      double x = a[i][c], y = b[i][c];
      bool same = (std::isnan(x) && std::isnan(y)) || std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y));
      if (!same) return "row " + std::to_string(i) + " column " + std::to_string(c) + ": " + query::doubleText(x) + " against " + query::doubleText(y);
    }
  }
  return "";
}

struct ArgusRun {
  bench::Timing t;
  bench::Timing one_thread;  // the same runs with the scan and its pipelines on one thread
  Rows rows;
  std::string refused;  // the engine's error when it refused the query
};

// One untimed warm-up run (its answer is kept for the comparison), then `runs` timed ones
// with a thread per core, then `runs` on one thread.
ArgusRun runArgus(const storage::Store& store, const BenchQuery& q, int runs) {
  ArgusRun out;
  query::QueryEngine engine(store);
  try {
    out.rows = rowsOf(engine.run(q.argus_sql));
  } catch (const query::QueryError& e) {
    bool refusal = e.kind() != query::QueryError::Kind::kExecution;
    if (!(q.may_refuse && refusal)) {
      std::fprintf(stderr, "argus failed on \"%s\": %s\n", q.name.c_str(), e.what());
      std::exit(1);
    }
    out.refused = e.what();
    return out;
  }
  auto timed = [&](const query::QueryOptions& options) {
    return bench::timeRuns(runs, [&](bench::Timing* t) {
      query::QueryResult r = engine.run(q.argus_sql, options);
      t->values = r.stats.values_scanned;
      t->rows = r.stats.rows_scanned;
      t->result_rows = r.rows;
    });
  };
  out.t = timed({});
  query::QueryOptions one;
  one.scan_threads = 1;
  out.one_thread = timed(one);
  return out;
}

std::string planJson(const std::vector<BenchQuery>& queries, const std::string& dir, int runs) {
  nlohmann::json plan;
  plan["threads"] = 2;
  plan["runs"] = runs;
  plan["setup"] = {
      "CREATE TABLE steps AS SELECT * FROM read_csv('" + dir + "/steps.csv', header = false, "
      "columns = {'rank': 'BIGINT', 'step': 'BIGINT', 'iter_ns': 'BIGINT', 'compute_ns': 'BIGINT'})",
      "CREATE TABLE kernel_buckets AS SELECT * FROM read_csv('" + dir + "/kernel_buckets.csv', header = false, "
      "columns = {'rank': 'BIGINT', 'step': 'BIGINT', 'bucket': 'INTEGER', 'n': 'BIGINT'})",
      "CREATE TABLE buckets AS SELECT * FROM read_csv('" + dir + "/buckets.csv', header = false, "
      "columns = {'bucket': 'INTEGER', 'value': 'DOUBLE'})",
  };
  for (size_t i = 0; i < queries.size(); ++i) {
    plan["queries"].push_back({{"name", queries[i].name}, {"sql", queries[i].duckdb_sql}, {"answer", dir + "/duckdb_" + std::to_string(i) + ".csv"}});
  }
  return plan.dump(2);
}

// Runs the DuckDB side; returns its JSON report (see bench/duckdb/run_queries.mjs).
nlohmann::json runDuckdb(const std::string& command, const std::string& plan_path) {
  std::string cmd = command + " '" + plan_path + "'";
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    std::fprintf(stderr, "cannot run %s\n", cmd.c_str());
    std::exit(1);
  }
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  int rc = pclose(p);
  nlohmann::json report = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  if (rc != 0 || report.is_discarded()) {
    std::fprintf(stderr, "%s failed (status %d): %s\n", cmd.c_str(), rc, out.c_str());
    std::exit(1);
  }
  return report;
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv,
                   "bench_query_vs_duckdb duckdb=<command> [ranks=10240] [steps=1000] [runs=7] [kernel_steps=K] [signatures=4] "
                   "[dir=/tmp/argus-vs-duckdb] [keep=0]");
  const std::string duckdb = args.str("duckdb", "");
  if (duckdb.empty()) {
    std::fprintf(stderr, "duckdb=<command> is required (bench/query_vs_duckdb.sh passes it)\n");
    return 2;
  }
  bench::GeneratedStore shape;
  shape.ranks = static_cast<int>(args.num("ranks", 10240));
  shape.steps = static_cast<int>(args.num("steps", 1000));
  const long block = storage::StoreOptions{}.block_steps, queried_from = std::max(0, shape.steps - kKernelQuerySteps);
  const long kernel_steps_arg = args.num("kernel_steps", shape.steps - queried_from / block * block);
  const int kernel_steps = static_cast<int>(std::min<long>(std::max<long>(kernel_steps_arg, kKernelQuerySteps), shape.steps));
  shape.kernels_from_step = shape.steps - kernel_steps;
  shape.gen.signatures = static_cast<int>(args.num("signatures", 4));
  shape.threads = 2;
  const int runs = static_cast<int>(std::max(1L, args.num("runs", 7)));
  const std::string dir = args.str("dir", "/tmp/argus-vs-duckdb");
  const std::string store_dir = dir + "/store";
  const bool keep = args.num("keep", 0) != 0;

  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto t0 = bench::Clock::now();
  std::unique_ptr<storage::Store> store = bench::buildStore(store_dir, "bench", shape);
  double build_s = std::chrono::duration<double>(bench::Clock::now() - t0).count();
  t0 = bench::Clock::now();
  uint64_t exported = exportRows(*store, "bench", static_cast<uint64_t>(shape.kernels_from_step), dir);
  double export_s = std::chrono::duration<double>(bench::Clock::now() - t0).count();
  std::printf("store: %d ranks x %d steps = %lld step rows; kernels (%d signatures per step, seed %llu) only for the last %d steps; "
              "written and sealed in %.1f s on %d threads\n",
              shape.ranks, shape.steps, static_cast<long long>(shape.ranks) * shape.steps, shape.gen.signatures,
              static_cast<unsigned long long>(shape.gen.seed), kernel_steps, build_s, shape.threads);
  std::printf("exported %llu CSV rows for DuckDB in %.1f s (%s)\n", static_cast<unsigned long long>(exported), export_s, dir.c_str());

  std::vector<BenchQuery> queries = benchQueries(shape.steps);
  std::vector<ArgusRun> argus;
  for (const BenchQuery& q : queries) argus.push_back(runArgus(*store, q, runs));

  const std::string plan_path = dir + "/plan.json";
  std::ofstream(plan_path) << planJson(queries, dir, runs);
  nlohmann::json duck = runDuckdb(duckdb, plan_path);

  // The same queries once RocksDB has compacted the store (memtables flushed, one sorted
  // run per column family): what a store settles to once background compaction has caught
  // up. The first runs read the store as sealing left it, compactions possibly running.
  auto* rocks = dynamic_cast<storage::RocksStore*>(store.get());
  if (rocks == nullptr) {
    std::fprintf(stderr, "the store is not a RocksStore\n");
    return 1;
  }
  Status compacted = rocks->compactAll();
  if (!compacted.isOk()) {
    std::fprintf(stderr, "compactAll: %s\n", compacted.toString().c_str());
    return 1;
  }
  std::vector<ArgusRun> settled;
  for (const BenchQuery& q : queries) settled.push_back(runArgus(*store, q, runs));
  std::printf("DuckDB %s, %d threads, loaded in %.1f s; Argus embedded, scans and GROUP BY on %u threads (one per core), other operators on one; "
              "median of %d warm runs each; cpu s: all of Argus's threads; compacted s: Argus again once the store is compacted; "
              "M/s/core: values scanned per CPU second, on %u threads and on one (the target is one core's rate; "
              "on more threads the same work can take more CPU seconds)\n\n",
              duck["version"].get<std::string>().c_str(), duck["threads"].get<int>(), duck["load_s"].get<double>(),
              defaultWorkerThreads(), runs, defaultWorkerThreads());

  bool ok = true;
  std::printf("%-44s %9s %9s %11s %9s %8s %9s %9s  %-24s %s\n", "query", "argus s", "cpu s", "compacted s", "duckdb s", "ratio", "M/s/core",
              "1 thread", "target", "met");
  for (size_t i = 0; i < queries.size(); ++i) {
    const BenchQuery& q = queries[i];
    const ArgusRun& a = argus[i];
    double duck_s = duck["queries"][i]["median_s"].get<double>();
    if (!a.refused.empty()) {
      std::printf("%-44s unsupported: %s (DuckDB %.4f s)\n", q.name.c_str(), a.refused.c_str(), duck_s);
      continue;
    }
    const Rows duck_rows = readCsv(duck["queries"][i]["answer"].get<std::string>());
    std::string diff = compare(a.rows, duck_rows);
    if (diff.empty()) diff = compare(settled[i].rows, duck_rows);
    const double rate = static_cast<double>(a.t.values) / a.t.cpu_s;
    const double one_rate = static_cast<double>(a.one_thread.values) / a.one_thread.cpu_s;
    const bool met = one_rate >= kValuesTargetPerCoreS && (q.target_s == 0 || a.t.wall_s <= q.target_s);
    char target[64];
    if (q.target_s > 0) {
      std::snprintf(target, sizeof target, "<= %g s, >= %.0f M", q.target_s, kValuesTargetPerCoreS / 1e6);
    } else {
      std::snprintf(target, sizeof target, ">= %.0f M", kValuesTargetPerCoreS / 1e6);
    }
    std::printf("%-44s %9.4f %9.4f %11.4f %9.4f %7.2fx %9.1f %9.1f  %-24s %s\n", q.name.c_str(), a.t.wall_s, a.t.cpu_s, settled[i].t.wall_s, duck_s,
                a.t.wall_s / duck_s, rate / 1e6, one_rate / 1e6, target, met ? "met" : "not met");
    if (!diff.empty()) {
      std::printf("  MISMATCH (Argus against DuckDB): %s\n", diff.c_str());
      ok = false;
    }
  }
  std::printf("\nanswers: %s (row counts, values within 1e-9 relative)\n", ok ? "the same on both engines" : "DIFFER");
  store.reset();
  if (!keep) std::filesystem::remove_all(dir);
  return ok ? 0 : 1;
}
