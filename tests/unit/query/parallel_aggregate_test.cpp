// Parallel aggregation (HashAggregate over a split input: PhysicalOperator::split): the same
// answers, in the same group order, as one thread, for every aggregate that merges and for
// those that do not (which run on one thread), over scans, filters, projections and windows;
// errors raised on a part's thread reach the caller.
#include <doctest/doctest.h>

#include <string>

#include "query/common/errors.h"
#include "tests/unit/query/split_test_util.h"

using namespace argus;
using argus::query::testutil::checkOverflowFails;
using argus::query::testutil::checkSameOnThreads;
using argus::query::testutil::Filled;
using argus::query::testutil::runWith;

TEST_CASE("an aggregate split among threads answers as one thread does, groups in the same order") {
  Filled data;
  query::QueryEngine engine(*data.store);
  const char* queries[] = {
      // No ORDER BY: the group order itself is checked.
      "SELECT step, count(*), count(iter_ns), sum(iter_ns), avg(compute_ns), min(iter_ns), max(iter_ns), stddev(iter_ns), "
      "median(iter_ns), quantile_disc(iter_ns, 0.9), mad(iter_ns) FROM steps GROUP BY step",
      "SELECT job, rank, sum(CAST(iter_ns AS DOUBLE)), var_pop(compute_ns), min(job) FROM steps WHERE rank % 3 <> 1 GROUP BY job, rank",
      "SELECT rank % 7 AS r, max(job), count(*) FROM steps WHERE step >= 5 GROUP BY r",
      "SELECT count(*), min(job), max(job), sum(iter_ns), stddev_pop(iter_ns) FROM steps",
      // wait_ns is NULL where the source does not report it.
      "SELECT rank, count(wait_ns), count(*), min(wait_ns), median(wait_ns), avg(wait_ns) FROM collectives GROUP BY rank",
      "SELECT count(*) FROM steps WHERE job = 'a' AND step > 1000",
      "SELECT step, count(*) FROM steps WHERE step > 1000 GROUP BY step",
      "SELECT DISTINCT rank % 7, job FROM steps",
      "SELECT rank, quantile(hist_merge(hist), 0.99), hist_total(hist_merge(hist)) FROM kernels WHERE step BETWEEN 10 AND 19 GROUP BY rank",
      // Windows partitioned by rank run in each part (a part holds whole ranks); their output
      // chunks never mix two stripes, so a GROUP BY over them keeps its order too.
      "SELECT count(*), sum(m), min(m), max(m) FROM (SELECT rank, step, median(iter_ns) OVER (PARTITION BY rank ORDER BY step "
      "ROWS BETWEEN 5 PRECEDING AND CURRENT ROW) AS m FROM steps WHERE job = 'a' AND step BETWEEN 3 AND 25) t",
      "SELECT rank, max(m), count(*) FROM (SELECT rank, step, avg(iter_ns) OVER (PARTITION BY rank ORDER BY step "
      "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS m FROM steps WHERE job = 'a') t GROUP BY rank",
      "SELECT job, rank, sum(m), count(m) FROM (SELECT job, rank, lag(iter_ns) OVER (PARTITION BY job, rank ORDER BY step) AS m "
      "FROM steps WHERE rank % 2 = 0) t GROUP BY job, rank",
      // Partitions across ranks: the window runs on one thread.
      "SELECT count(*), sum(r) FROM (SELECT rank() OVER (PARTITION BY step ORDER BY iter_ns) AS r FROM steps WHERE job = 'a') t",
      // These do not merge: one thread runs them, with the scan's own threads.
      "SELECT step, argmax(rank, iter_ns), argmin(job, iter_ns) FROM steps GROUP BY step",
      "SELECT step, count(DISTINCT rank) FROM steps GROUP BY step",
  };
  for (const char* sql : queries) checkSameOnThreads(engine, sql, true);
}

TEST_CASE("an error on one part's thread stops the query with that error") {
  Filled data;
  query::QueryEngine engine(*data.store);
  checkOverflowFails(engine, "SELECT step, sum(CASE WHEN rank = 57 THEN iter_ns * 9223372036854775807 ELSE 0 END) FROM steps GROUP BY step");
  query::QueryOptions small;
  small.scan_threads = 3;
  small.memory_limit_bytes = 64 << 10;
  CHECK_THROWS_WITH_AS(engine.run("SELECT rank, step, median(iter_ns) FROM steps GROUP BY rank, step", small),
                       doctest::Contains("GROUP BY needs more than the memory limit"), query::ExecutionError);
  // The engine runs the next query normally.
  CHECK(runWith(engine, "SELECT count(*) FROM steps", 3).value(0, 0).bigintValue() == 3150);
}

TEST_CASE("quantiles, mad, min and max of one argument read the values one median keeps") {
  Filled data;
  query::QueryEngine engine(*data.store);
  // 400,000 values in 100 groups: 3.2 MB kept per copy, far above the rest of the state.
  auto peak = [&](const std::string& aggregates) {
    return runWith(engine, "SELECT generate_series % 100 AS g, " + aggregates + " FROM generate_series(1, 400000) GROUP BY g", 1)
        .stats.peak_memory_bytes;
  };
  const double one = static_cast<double>(peak("median(generate_series)"));
  const double shared = static_cast<double>(
      peak("median(generate_series), quantile_cont(generate_series, 0.9), quantile_disc(generate_series, 0.99), mad(generate_series), "
           "min(generate_series), max(generate_series)"));
  const double apart = static_cast<double>(peak("median(generate_series), quantile_cont(generate_series * 1, 0.9)"));
  CAPTURE(one);
  CAPTURE(shared);
  CAPTURE(apart);
  CHECK(one > 3.2e6);
  CHECK(shared < 1.2 * one);  // one copy
  CHECK(apart > 1.8 * one);   // another expression: its own copy
}
