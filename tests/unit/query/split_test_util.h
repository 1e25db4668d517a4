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

}  // namespace argus::query::testutil
