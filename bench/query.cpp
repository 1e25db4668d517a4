// bench_query: the query engine on a generated store: latency and values scanned per second
// per core for "per-step max and median step time across ranks", against the store's raw
// scan of the same columns in the same process (the floor the engine stands on) and a
// scan-bound aggregate. Prints figures and ratios; asserts nothing. Target (later
// increments): >= 100 M values scanned per second per core.
//
//   bench_query [ranks=256] [steps=2000] [runs=5] [dir=/tmp/argus-bench-query] [keep=0]
//
// The store is written through Store::write (head entries) and sealed into chunks, as ingest
// and the sealer would; the query runs embedded, single-threaded.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "bench/query_store.h"
#include "query/engine.h"
#include "storage/store.h"

using namespace argus;
using bench::Timing;
using bench::timeRuns;

namespace {

void print(const char* what, const Timing& t, const Timing* base) {
  std::printf("%-44s %9.2f ms  %7.1f M rows/s  %7.1f M values/s/core", what, t.wall_s * 1e3, static_cast<double>(t.rows) / t.wall_s / 1e6,
              static_cast<double>(t.values) / t.cpu_s / 1e6);
  if (base) std::printf("  %5.2fx raw scan", t.wall_s / base->wall_s);
  std::printf("\n");
}

Timing runQuery(const storage::Store& store, const std::string& sql, int runs) {
  return timeRuns(runs, [&](Timing* t) {
    query::QueryResult r = query::QueryEngine(store).run(sql);
    t->values = r.stats.values_scanned;
    t->rows = r.stats.rows_scanned;
    t->result_rows = r.rows;
    t->chunks_read = r.stats.chunks_read;
    t->chunks_skipped = r.stats.chunks_skipped;
  });
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv, "bench_query [ranks=256] [steps=2000] [runs=5] [dir=/tmp/argus-bench-query] [keep=0]");
  bench::GeneratedStore shape;
  shape.ranks = static_cast<int>(args.num("ranks", 256));
  shape.steps = static_cast<int>(args.num("steps", 2000));
  const int ranks = shape.ranks, steps = shape.steps;
  const int runs = static_cast<int>(args.num("runs", 5));
  const std::string dir = args.str("dir", "/tmp/argus-bench-query");
  const bool keep = args.num("keep", 0) != 0;

  auto t0 = bench::Clock::now();
  std::unique_ptr<storage::Store> store = bench::buildStore(dir, "bench", shape);
  double build_s = std::chrono::duration<double>(bench::Clock::now() - t0).count();
  const uint64_t rows = static_cast<uint64_t>(ranks) * static_cast<uint64_t>(steps);
  std::printf("store: %d ranks x %d steps = %llu step rows, written and sealed in %.1f s (%s)\n", ranks, steps,
              static_cast<unsigned long long>(rows), build_s, dir.c_str());
  std::printf("runs: %d, median reported; one thread\n\n", runs);

  // Baseline: the store's scan of the two columns, no engine.
  Timing raw = timeRuns(runs, [&](Timing* t) {
    storage::ScanSpec spec;
    spec.job = "bench";
    spec.columns = {"step", "iter_ns"};
    spec.batch_rows = 2048;
    auto cursor = store->scan(spec);
    if (!cursor.isOk()) std::exit(1);
    storage::ColumnBatch batch;
    bool has = true;
    uint64_t n = 0;
    int64_t sink = 0;
    while (has) {
      if (!(*cursor)->next(&batch, &has).isOk()) std::exit(1);
      if (!has) break;
      n += batch.rows;
      sink += batch.columns[1].ints.empty() ? 0 : batch.columns[1].ints[0];
    }
    t->rows = n;
    t->values = 2 * n;
    if (sink == 42) std::printf(" ");
  });
  print("raw ScanCursor (step, iter_ns)", raw, nullptr);

  Timing scan_agg = runQuery(*store, "SELECT count(*), max(iter_ns), max(step) FROM steps WHERE job = 'bench'", runs);
  print("count(*), max(iter_ns), max(step)", scan_agg, &raw);

  const std::string headline = "SELECT step, max(iter_ns), median(iter_ns) FROM steps WHERE job = 'bench' GROUP BY step";
  Timing per_step = runQuery(*store, headline, runs);
  print("per-step max and median across ranks", per_step, &raw);

  Timing sorted = runQuery(*store, headline + " ORDER BY step", runs);
  print("  ... ORDER BY step", sorted, &raw);

  Timing per_rank = runQuery(*store, "SELECT rank, avg(iter_ns), stddev(iter_ns), quantile(iter_ns, 0.99) FROM steps WHERE job = 'bench' GROUP BY rank", runs);
  print("per-rank avg, stddev, p99", per_rank, &raw);

  std::string window = "SELECT step, max(iter_ns), median(iter_ns) FROM steps WHERE job = 'bench' AND step BETWEEN " + std::to_string(steps / 2) +
                       " AND " + std::to_string(steps / 2 + 59) + " GROUP BY step";
  Timing win = runQuery(*store, window, runs);
  print("per-step, a 60-step window (pushdown)", win, &raw);
  query::QueryOptions no_push;
  no_push.pushdown = false;
  Timing win_np = timeRuns(runs, [&](Timing* t) {
    query::QueryResult r = query::QueryEngine(*store).run(window, no_push);
    t->values = r.stats.values_scanned;
    t->rows = r.stats.rows_scanned;
    t->chunks_read = r.stats.chunks_read;
  });
  print("  ... the same without pushdown", win_np, &raw);

  std::printf("\nper-step query: %llu groups, %llu values scanned; %.2f ms per 1 M rows; target >= 100 M values/s/core: %s\n",
              static_cast<unsigned long long>(per_step.result_rows), static_cast<unsigned long long>(per_step.values),
              per_step.wall_s * 1e3 / (static_cast<double>(rows) / 1e6),
              static_cast<double>(per_step.values) / per_step.cpu_s >= 100e6 ? "met" : "not yet");
  std::printf("window: %.1fx faster with pushdown (%llu chunks read, against %llu without)\n", win_np.wall_s / win.wall_s,
              static_cast<unsigned long long>(win.chunks_read), static_cast<unsigned long long>(win_np.chunks_read));
  store.reset();
  if (!keep) std::filesystem::remove_all(dir);
  return 0;
}
