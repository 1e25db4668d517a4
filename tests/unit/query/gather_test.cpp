// Gather (query/execution/gather.h): a query's result, a sort and a limit read a split
// pipeline's copies from threads, and see the same rows in the same order as one thread:
// scans of two jobs, filters, projections that make strings, histograms, windows
// partitioned by rank; errors raised on a copy's thread reach the caller, and a limit that
// stops early stops the copies.
#include <doctest/doctest.h>

#include <string>

#include "query/common/errors.h"
#include "tests/unit/query/split_test_util.h"

using namespace argus;
using argus::query::testutil::checkOverflowFails;
using argus::query::testutil::checkSameOnThreads;
using argus::query::testutil::Filled;
using argus::query::testutil::runWith;

TEST_CASE("rows read through a Gather come in the order one thread gives them") {
  Filled data;
  query::QueryEngine engine(*data.store);
  const char* whole[] = {
      "SELECT job, rank, step, iter_ns FROM steps",
      // Strings made per chunk by a projection: views into the copy's buffers until copied.
      "SELECT rank, step, iter_ns * 2 AS x, job || '/' || CAST(rank AS VARCHAR) AS name FROM steps WHERE rank % 3 <> 1 AND step >= 5",
      "SELECT rank, step, signature, hist, quantile(hist, 0.9) FROM kernels WHERE step BETWEEN 10 AND 12",
      "SELECT job, rank, step, median(iter_ns) OVER (PARTITION BY job, rank ORDER BY step ROWS BETWEEN 4 PRECEDING AND CURRENT ROW) AS m "
      "FROM steps",
      "SELECT t.rank, t.m FROM (SELECT rank, step, lag(iter_ns) OVER (PARTITION BY rank ORDER BY step) AS m FROM steps WHERE job = 'b') t",
      "SELECT rank, step, iter_ns FROM steps ORDER BY iter_ns DESC, rank, step",
      "SELECT rank FROM steps WHERE step > 1000",
  };
  for (const char* sql : whole) checkSameOnThreads(engine, sql, true);
  // Some rows, and none at all.
  CHECK(runWith(engine, whole[0], 1).rows == 3150);
  CHECK(runWith(engine, "SELECT rank FROM steps WHERE step > 1000", 3).rows == 0);
  // A limit stops reading early (the copies may have read ahead: the answers alone agree).
  const char* limited[] = {
      "SELECT job, rank, step FROM steps LIMIT 25 OFFSET 1000",
      "SELECT rank, step, compute_ns FROM steps ORDER BY compute_ns, rank, step LIMIT 17",
      "SELECT rank, step FROM steps WHERE job = 'a' LIMIT 1",
  };
  for (const char* sql : limited) checkSameOnThreads(engine, sql, false);
}

TEST_CASE("an error on a copy's thread reaches the reader of a Gather") {
  Filled data;
  query::QueryEngine engine(*data.store);
  checkOverflowFails(engine, "SELECT step, CASE WHEN rank = 57 THEN iter_ns * 9223372036854775807 ELSE 0 END FROM steps");
  query::QueryOptions late;
  late.scan_threads = 3;
  late.deadline = std::chrono::nanoseconds(1);
  CHECK_THROWS_WITH_AS(engine.run("SELECT rank, step, iter_ns FROM steps", late), doctest::Contains("ran past its deadline"),
                       query::ExecutionError);
  // The engine runs the next query normally.
  CHECK(runWith(engine, "SELECT rank FROM steps", 3).rows == 3150);
}
