// bench_query_runs: one statement run N times, embedded, on an existing data dir (for
// example the store bench_query_vs_duckdb keeps with keep=1): per run its wall and CPU
// time and the page faults it took, then the medians. For comparing builds or allocator
// settings (MALLOC_CONF=...) on the same store without rebuilding it; the first run reads
// from disk into the block cache, the others are warm.
//
// threads=1 makes the work one thread's, for instruction counts under callgrind that do
// not depend on how the threads shared it.
//
// compact=1 compacts the store (RocksStore::compactAll) after the runs and runs them again,
// in the same process: inside bench_query_vs_duckdb the runs after its compaction were
// often slower than the ones before, which a fresh process on the compacted store is not.
// Unexplained so far; here the per-step median then took ~11,000 page faults a run
// instead of ~150 (its CPU +5%), the avg over 61 steps moved by -4% to +27%.
//
//   bench_query_runs data=DIR sql="SELECT ..." [runs=5] [threads=0 (one per core)] [compact=0]
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/query_store.h"
#include "query/common/errors.h"
#include "query/engine.h"
#include "storage/rocks_store.h"
#include "storage/store.h"

using namespace argus;

namespace {

long minorFaults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv, "bench_query_runs data=DIR sql=\"SELECT ...\" [runs=5] [threads=0] [compact=0]");
  const std::string data = args.str("data", ""), sql = args.str("sql", "");
  const int runs = static_cast<int>(std::max(1L, args.num("runs", 5)));
  const bool compact = args.num("compact", 0) != 0;
  query::QueryOptions options;
  options.scan_threads = static_cast<size_t>(std::max(0L, args.num("threads", 0)));
  options.deadline = std::chrono::minutes(10);  // not the default 30 s: runs under valgrind are ~50x slower
  if (data.empty() || sql.empty()) {
    std::fprintf(stderr, "data=DIR and sql=... are required\n");
    return 2;
  }
  // Read-only unless it compacts: opening writable replays and flushes the WAL, so each run
  // of the bench left new SST files in the store it measures.
  storage::StoreOptions so;
  so.read_only = !compact;
  so.create_if_missing = false;
  Result<std::unique_ptr<storage::Store>> store = storage::Store::open(data, so);
  if (!store.isOk()) {
    std::fprintf(stderr, "%s\n", store.status().toString().c_str());
    return 1;
  }
  query::QueryEngine engine(**store);
  // Runs the statement `runs` times and prints each run, then the medians.
  auto measure = [&](const char* label) -> bool {
    std::vector<double> wall, cpu, faults;
    uint64_t values = 0;
    size_t rows = 0;
    try {
      for (int i = 0; i < runs; ++i) {
        const long f0 = minorFaults();
        const auto w0 = bench::Clock::now();
        const double c0 = bench::cpuSeconds();
        query::QueryResult r = engine.run(sql, options);  // freed before the next run, as a server's would be
        wall.push_back(std::chrono::duration<double>(bench::Clock::now() - w0).count());
        cpu.push_back(bench::cpuSeconds() - c0);
        faults.push_back(static_cast<double>(minorFaults() - f0));
        values = r.stats.values_scanned;
        rows = r.rows;
        std::printf("run: %.4f s wall, %.4f s cpu, %.0f page faults, %zu rows\n", wall.back(), cpu.back(), faults.back(), rows);
      }
    } catch (const query::QueryError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return false;
    }
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    std::printf("%smedian of %d: %.4f s wall, %.4f s cpu, %.0f page faults; %llu values scanned, %zu rows\n", label, runs, median(wall),
                median(cpu), median(faults), static_cast<unsigned long long>(values), rows);
    return true;
  };
  if (!measure("")) return 1;
  if (!compact) return 0;
  auto* rocks = dynamic_cast<storage::RocksStore*>(store->get());
  if (rocks == nullptr) {
    std::fprintf(stderr, "the store is not a RocksStore\n");
    return 1;
  }
  const auto c0 = bench::Clock::now();
  if (Status s = rocks->compactAll(); !s.isOk()) {
    std::fprintf(stderr, "compactAll: %s\n", s.toString().c_str());
    return 1;
  }
  std::printf("compacted in %.1f s\n", std::chrono::duration<double>(bench::Clock::now() - c0).count());
  if (!measure("after compaction: ")) return 1;
  return 0;
}
