// bench_query_runs: one statement run N times, embedded, on an existing data dir (for
// example the store bench_query_vs_duckdb keeps with keep=1): per run its wall and CPU
// time and the page faults it took, then the medians. For comparing builds or allocator
// settings (MALLOC_CONF=...) on the same store without rebuilding it; the first run reads
// from disk into the block cache, the others are warm.
//
//   bench_query_runs data=DIR sql="SELECT ..." [runs=5]
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "bench/query_store.h"
#include "query/common/errors.h"
#include "query/engine.h"
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
  bench::Args args(argc, argv, "bench_query_runs data=DIR sql=\"SELECT ...\" [runs=5]");
  const std::string data = args.str("data", ""), sql = args.str("sql", "");
  const int runs = static_cast<int>(std::max(1L, args.num("runs", 5)));
  if (data.empty() || sql.empty()) {
    std::fprintf(stderr, "data=DIR and sql=... are required\n");
    return 2;
  }
  Result<std::unique_ptr<storage::Store>> store = storage::Store::open(data);
  if (!store.isOk()) {
    std::fprintf(stderr, "%s\n", store.status().toString().c_str());
    return 1;
  }
  query::QueryEngine engine(**store);
  std::vector<double> faults;
  try {
    bench::Timing t = bench::timeRuns(runs, [&](bench::Timing* timing) {
      const long f0 = minorFaults();
      auto w0 = bench::Clock::now();
      const double c0 = bench::cpuSeconds();
      query::QueryResult r = engine.run(sql);
      const double wall = std::chrono::duration<double>(bench::Clock::now() - w0).count();
      const long f = minorFaults() - f0;
      faults.push_back(static_cast<double>(f));
      timing->result_rows = r.rows;
      timing->values = r.stats.values_scanned;
      std::printf("run: %.4f s wall, %.4f s cpu, %ld page faults, %zu rows\n", wall, bench::cpuSeconds() - c0, f, r.rows);
    });
    std::sort(faults.begin(), faults.end());
    std::printf("median of %d: %.4f s wall, %.4f s cpu, %.0f page faults; %llu values scanned, %llu rows\n", runs, t.wall_s, t.cpu_s,
                faults[faults.size() / 2], static_cast<unsigned long long>(t.values), static_cast<unsigned long long>(t.result_rows));
  } catch (const query::QueryError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
