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
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "query/engine.h"
#include "simulate/synthetic_steps.h"
#include "storage/store.h"

using namespace argus;
using Clock = std::chrono::steady_clock;

namespace {

double cpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

struct Timing {
  double wall_s = 0;  // median over runs
  double cpu_s = 0;   // median over runs
  uint64_t values = 0;
  uint64_t rows = 0;
  uint64_t result_rows = 0;
  uint64_t chunks_read = 0;
  uint64_t chunks_skipped = 0;
};

template <typename Fn>
Timing timeRuns(int runs, Fn&& fn) {
  std::vector<double> wall, cpu;
  Timing t;
  for (int i = 0; i < runs; ++i) {
    auto w0 = Clock::now();
    double c0 = cpuSeconds();
    fn(&t);
    cpu.push_back(cpuSeconds() - c0);
    wall.push_back(std::chrono::duration<double>(Clock::now() - w0).count());
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  t.wall_s = wall[wall.size() / 2];
  t.cpu_s = cpu[cpu.size() / 2];
  return t;
}

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
  std::map<std::string, std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    size_t eq = a.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "usage: bench_query [ranks=256] [steps=2000] [runs=5] [dir=/tmp/argus-bench-query] [keep=0]\n");
      return 2;
    }
    args[a.substr(0, eq)] = a.substr(eq + 1);
  }
  auto num = [&](const char* k, long def) { return args.count(k) ? std::atol(args[k].c_str()) : def; };
  const int ranks = static_cast<int>(num("ranks", 256));
  const int steps = static_cast<int>(num("steps", 2000));
  const int runs = static_cast<int>(num("runs", 5));
  const std::string dir = args.count("dir") ? args["dir"] : "/tmp/argus-bench-query";
  const bool keep = num("keep", 0) != 0;

  std::filesystem::remove_all(dir);
  storage::StoreOptions so;
  so.sync_wal = false;
  auto opened = storage::Store::open(dir, so);
  if (!opened.isOk()) {
    std::fprintf(stderr, "open %s: %s\n", dir.c_str(), opened.status().toString().c_str());
    return 1;
  }
  std::unique_ptr<storage::Store> store = std::move(opened).value();
  auto job = store->ensureJob("bench");
  auto t0 = Clock::now();
  simulate::SyntheticOptions gen_options;
  gen_options.signatures = 2;
  gen_options.collectives = 1;
  gen_options.stacks = 1;
  gen_options.recompile_rate = 0;
  for (int r = 0; r < ranks; ++r) {
    simulate::SyntheticSteps gen(static_cast<uint32_t>(r), gen_options);
    std::vector<model::StepRecord> recs;
    for (int s = 0; s < steps; ++s) {
      recs.push_back(gen.next());
      if (recs.size() == 256 || s + 1 == steps) {
        storage::WriteRequest w;
        w.job = *job;
        w.records = recs;
        Status st = store->write(w);
        if (!st.isOk()) {
          std::fprintf(stderr, "write: %s\n", st.toString().c_str());
          return 1;
        }
        recs.clear();
      }
    }
  }
  Status sealed = store->sealAll();
  if (!sealed.isOk()) {
    std::fprintf(stderr, "seal: %s\n", sealed.toString().c_str());
    return 1;
  }
  double build_s = std::chrono::duration<double>(Clock::now() - t0).count();
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
