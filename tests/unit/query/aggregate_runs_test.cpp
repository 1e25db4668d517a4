// Aggregation over groups that come in runs (HashAggregate looks a clustered key up once
// per run; AggregateState::updateRuns folds a run at a time): the same answers as one
// group lookup and one update per row, for every aggregate of one numeric argument, with
// and without NULLs, and through the engine over a scan that delivers rank's rows together.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "query/common/errors.h"
#include "query/function/function_registry.h"
#include "tests/unit/query/split_test_util.h"

using namespace argus;
using namespace argus::query;
using argus::query::testutil::checkSame;
using argus::query::testutil::Filled;
using argus::query::testutil::runWith;

namespace {

// Rows in runs of 1 to 40 of groups 0-5 (a group recurs in later runs), values in [-1e6, 1e6).
struct RunInput {
  std::vector<uint32_t> row_groups, run_groups, run_starts;
  Vector values;
};

RunInput makeInput(LogicalType type, bool with_nulls) {
  RunInput in;
  std::mt19937_64 rng(7);
  while (in.row_groups.size() < 1000) {
    const uint32_t g = static_cast<uint32_t>(rng() % 6), len = static_cast<uint32_t>(1 + rng() % 40);
    in.run_starts.push_back(static_cast<uint32_t>(in.row_groups.size()));
    in.run_groups.push_back(g);
    in.row_groups.insert(in.row_groups.end(), len, g);
  }
  in.run_starts.push_back(static_cast<uint32_t>(in.row_groups.size()));
  in.values.reset(type, in.row_groups.size());
  for (size_t i = 0; i < in.row_groups.size(); ++i) {
    const int64_t v = static_cast<int64_t>(rng() % 2'000'000) - 1'000'000;
    if (type == LogicalType::kDouble) {
      in.values.f64[i] = static_cast<double>(v) / 7;
    } else {
      in.values.i64[i] = v;
    }
    if (with_nulls && rng() % 5 == 0) in.values.setNull(i);
  }
  return in;
}

// finalize's answer as SQL literals, one per group.
std::vector<std::string> answers(AggregateState& state, size_t groups) {
  Vector out;
  Arena arena;
  state.finalize(groups, out, arena);
  std::vector<std::string> cells;
  for (size_t g = 0; g < groups; ++g) cells.push_back(out.value(g).toSql());
  return cells;
}

}  // namespace

TEST_CASE("updateRuns folds the same as update, for every aggregate of one numeric argument") {
  const FunctionRegistry& registry = FunctionRegistry::instance();
  const char* names[] = {"count", "sum", "avg", "min", "max", "stddev", "var_pop", "median", "mad", "quantile_disc"};
  for (const char* name : names) {
    const std::vector<AggregateFunction>* overloads = registry.aggregate(name);
    REQUIRE(overloads != nullptr);
    for (const AggregateFunction& f : *overloads) {
      const std::string fn = name;
      if (f.args.empty() || f.row_args != 1 || (f.args[0] != LogicalType::kBigInt && f.args[0] != LogicalType::kDouble)) continue;
      for (bool with_nulls : {false, true}) {
        CAPTURE(fn);
        CAPTURE(static_cast<int>(f.args[0]));
        CAPTURE(with_nulls);
        const RunInput in = makeInput(f.args[0], with_nulls);
        AggregateParams params;
        params.name = name;
        if (f.args.size() == 2) params.constants.push_back(Value::dbl(0.9));
        std::unique_ptr<AggregateState> per_row = f.make(params), in_runs = f.make(params);
        per_row->resize(6);
        in_runs->resize(6);
        const Vector* args[] = {&in.values};
        per_row->update(args, in.row_groups.data(), in.row_groups.size());
        const GroupRuns runs{in.run_groups.data(), in.run_starts.data(), in.run_groups.size()};
        if (in_runs->foldsRuns(args)) {
          in_runs->updateRuns(args, runs);
        } else {
          in_runs->AggregateState::updateRuns(args, runs);  // a group per row, then update
        }
        CHECK(answers(*in_runs, 6) == answers(*per_row, 6));
        if (with_nulls) CHECK_FALSE(in_runs->foldsRuns(args));  // NULLs take update's path
      }
    }
  }
}

TEST_CASE("GROUP BY a key the scan delivers in runs answers as the per-row lookup does") {
  Filled data;
  QueryEngine engine(*data.store);
  // GROUP BY rank: rank's rows come together, 30 a rank (runs). GROUP BY rank, job: two
  // keys, one lookup per row. The same groups, in the same order. wait_ns has NULLs.
  const std::pair<const char*, const char*> queries[] = {
      {"steps", "count(*), count(iter_ns), sum(iter_ns), avg(compute_ns), sum(CAST(iter_ns AS DOUBLE)), avg(CAST(compute_ns AS DOUBLE)), "
                "min(iter_ns), median(iter_ns)"},
      {"collectives", "count(*), count(wait_ns), sum(wait_ns), avg(wait_ns), median(wait_ns)"},
  };
  for (const auto& [table, aggregates] : queries) {
    for (size_t threads : {1, 2}) {
      CAPTURE(table);
      CAPTURE(threads);
      const std::string from = std::string(", ") + aggregates + " FROM " + table + " WHERE job = 'a' GROUP BY rank";
      const QueryResult runs = runWith(engine, "SELECT rank" + from, threads);
      const QueryResult rows = runWith(engine, "SELECT rank" + from + ", job", threads);
      CHECK(runs.rows == 100);
      checkSame(rows, runs);
    }
  }
  // An overflow inside a run is the same error.
  CHECK_THROWS_WITH_AS(runWith(engine, "SELECT rank, sum(CASE WHEN step >= 0 THEN 4611686018427387904 ELSE 0 END) FROM steps WHERE job = 'a' GROUP BY rank", 1),
                       doctest::Contains("BIGINT overflow in sum()"), ExecutionError);
}
