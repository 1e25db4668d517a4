// Shared by the tests of split pipelines (parallel_aggregate_test, gather_test): a store of
// two jobs, a query run with a given thread count, and a cell-by-cell comparison of answers.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "query/common/errors.h"
#include "query/engine.h"
#include "simulate/synthetic_steps.h"
#include "storage/store.h"
#include "tests/unit/storage/store_test_util.h"

namespace argus::query::testutil {

// Two jobs: "a" with 100 ranks (many stripes per part), "b" with 5 (fewer stripes than some
// thread counts), 30 steps each, in a store removed at the end.
struct Filled {
  Filled() {
    store = storage::Store::open(dir.path()).value();
    for (auto [name, ranks] : {std::pair{"a", 100u}, std::pair{"b", 5u}}) {
      auto job = store->ensureJob(name);
      REQUIRE(job.isOk());
      std::vector<model::StepRecord> records;
      for (uint32_t r = 0; r < ranks; ++r) {
        simulate::SyntheticSteps gen(r, 6, /*seed=*/r + 1);
        for (int i = 0; i < 30; ++i) records.push_back(gen.next());
      }
      REQUIRE(storage::testutil::writeRecords(*store, *job, records).isOk());
    }
  }
  storage::testutil::TempDir dir;
  std::unique_ptr<storage::Store> store;
};

inline QueryResult runWith(const QueryEngine& engine, const std::string& sql, size_t threads) {
  QueryOptions options;
  options.scan_threads = threads;
  return engine.run(sql, options);
}

// Equal cells, row by row; DOUBLEs within 1e-9 relative (merged sums and variances round in
// another order).
inline void checkSame(const QueryResult& want, const QueryResult& got) {
  REQUIRE(got.rows == want.rows);
  REQUIRE(got.columns.size() == want.columns.size());
  for (size_t c = 0; c < want.columns.size(); ++c) {
    for (size_t r = 0; r < want.rows; ++r) {
      const Value w = want.value(r, c), g = got.value(r, c);
      CAPTURE(r);
      CAPTURE(c);
      if (want.types[c] == LogicalType::kDouble && !w.isNull() && !g.isNull()) {
        CHECK(std::fabs(w.doubleValue() - g.doubleValue()) <= 1e-9 * std::max(1.0, std::fabs(w.doubleValue())));
      } else {
        CHECK(g.toSql() == w.toSql());
      }
    }
  }
}

// With 2, 3 and 8 threads the answer is one thread's; with `same_counts`, so are the scan's
// counts (a limit's copies may read ahead: its counts may differ).
inline void checkSameOnThreads(const QueryEngine& engine, const std::string& sql, bool same_counts) {
  CAPTURE(sql);
  const QueryResult one = runWith(engine, sql, 1);
  for (size_t threads : {2, 3, 8}) {
    CAPTURE(threads);
    const QueryResult many = runWith(engine, sql, threads);
    checkSame(one, many);
    if (!same_counts) continue;
    CHECK(many.stats.rows_scanned == one.stats.rows_scanned);
    CHECK(many.stats.chunks_read == one.stats.chunks_read);
    CHECK(many.stats.jobs_scanned == one.stats.jobs_scanned);
  }
}

// `sql` overflows on rank 57's rows only (one part's thread meets it): on one thread or
// three, the query fails with that error.
inline void checkOverflowFails(const QueryEngine& engine, const std::string& sql) {
  for (size_t threads : {1, 3}) {
    CAPTURE(threads);
    CHECK_THROWS_WITH_AS(runWith(engine, sql, threads), doctest::Contains("BIGINT overflow in '*'"), ExecutionError);
  }
}

}  // namespace argus::query::testutil
