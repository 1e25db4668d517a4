// EXPLAIN ANALYZE: the query runs and each operator's line says what it produced; a split
// pipeline's copies count as the operator they were made from.
#include <doctest/doctest.h>

#include <regex>
#include <string>
#include <vector>

#include "tests/unit/query/split_test_util.h"

using namespace argus;
using namespace argus::query;
using namespace argus::query::testutil;

namespace {

std::vector<std::string> planLines(const QueryResult& r) {
  REQUIRE(r.names == std::vector<std::string>{"plan"});
  std::vector<std::string> lines;
  for (size_t i = 0; i < r.rows; ++i) lines.push_back(std::string(r.columns[0].str[i]));
  return lines;
}

// The rows= and chunks= of a line that starts (after its indent) with `op`.
struct Counted {
  long rows = -1, chunks = -1, parts = 0;
  double ms = -1;
};
Counted counted(const std::vector<std::string>& lines, const std::string& op) {
  static const std::regex kProfile(R"(\(rows=(\d+) chunks=(\d+) time=([0-9.]+) ms(?: in (\d+) parts)?\)$)");
  for (const std::string& l : lines) {
    if (l.find_first_not_of(' ') != l.find(op)) continue;
    std::smatch m;
    REQUIRE_MESSAGE(std::regex_search(l, m, kProfile), l);
    return {std::stol(m[1]), std::stol(m[2]), m[4].matched ? std::stol(m[4]) : 0, std::stod(m[3])};
  }
  FAIL("no line for " << op);
  return {};
}

}  // namespace

TEST_CASE("EXPLAIN ANALYZE: every operator's rows, on one thread and split over several") {
  Filled f;
  QueryEngine engine(*f.store);
  const std::string sql = "SELECT rank, count(*) FROM steps WHERE job = 'a' AND step >= 10 AND iter_ns > 0 GROUP BY rank ORDER BY rank LIMIT 7";
  for (size_t threads : {1, 3}) {
    CAPTURE(threads);
    const QueryResult r = runWith(engine, "EXPLAIN ANALYZE " + sql, threads);
    const std::vector<std::string> lines = planLines(r);
    CHECK(lines.size() == planLines(runWith(engine, "EXPLAIN " + sql, threads)).size());
    // 100 ranks x 20 steps scanned (steps >= 10: pushed down), every one kept by the filter,
    // 100 groups, 7 returned.
    const Counted scan = counted(lines, "TABLE_SCAN"), filter = counted(lines, "FILTER"), agg = counted(lines, "HASH_AGGREGATE");
    CHECK(scan.rows == 2000);
    CHECK(filter.rows == 2000);
    CHECK(agg.rows == 100);
    CHECK(counted(lines, "TOP_N").rows == 7);
    CHECK(scan.chunks >= 1);
    CHECK(agg.ms >= 0);
    CHECK((threads == 1 ? scan.parts == 0 : scan.parts == 3));
    CHECK(r.stats.rows_scanned == 2000);
  }
}

TEST_CASE("EXPLAIN ANALYZE returns the plan, not the rows, and still fails as the query would") {
  Filled f;
  QueryEngine engine(*f.store);
  const QueryResult r = runWith(engine, "EXPLAIN ANALYZE SELECT rank, step FROM steps WHERE job = 'b'", 2);
  CHECK(r.rows == planLines(r).size());
  CHECK(counted(planLines(r), "TABLE_SCAN").rows == 150);
  QueryOptions tight;
  tight.memory_limit_bytes = 4096;
  CHECK_THROWS_AS(engine.run("EXPLAIN ANALYZE SELECT rank, step, iter_ns FROM steps ORDER BY iter_ns", tight), QueryError);
}
