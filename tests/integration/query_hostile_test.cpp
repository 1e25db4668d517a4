// Hostile queries against a real argusd over POST /api/v1/query (and Grafana's /query): deep nesting of every kind,
// a huge IN list, oversized text, queries (cross joins among them) past their memory cap or
// deadline. Each gets a
// clean 4xx with a message, a normal query keeps being answered while they run, and the
// server is up and right afterwards.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli/http_client.h"
#include "tests/integration/ingest_test_util.h"

using namespace argus;
using namespace argus::testing;
using Json = nlohmann::json;

namespace {

constexpr uint32_t kRanks = 8;
constexpr uint32_t kSteps = 40;

std::string repeat(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

cli::HttpReply post(uint16_t port, const std::string& sql, const std::string& params = "") {
  Result<cli::HttpReply> reply = cli::httpRequest("127.0.0.1", port, "POST", "/api/v1/query" + params, sql, std::chrono::seconds(120));
  REQUIRE_MESSAGE(reply.isOk(), reply.status().toString());
  return *reply;
}

// The query fails with `status` and an error whose text contains `cause`.
void refused(uint16_t port, const std::string& sql, int status, const std::string& cause, const std::string& params = "") {
  cli::HttpReply r = post(port, sql, params);
  INFO(sql.substr(0, 120) << " -> " << r.body.substr(0, 300));
  CHECK(r.status == status);
  Json body = Json::parse(r.body, nullptr, false);
  REQUIRE(body.is_object());
  CHECK(body["error"].get<std::string>().find(cause) != std::string::npos);
}

int64_t count(uint16_t port, const std::string& sql) {
  cli::HttpReply r = post(port, sql);
  INFO(sql.substr(0, 120) << " -> " << r.body.substr(0, 300));
  REQUIRE(r.status == 200);
  Json body = Json::parse(r.body);
  REQUIRE(body["rows"].size() == 1);
  return body["rows"][0][0].get<int64_t>();
}

// Polls a /metrics sample every 20 ms until `done` holds of it or 20 s pass; returns its last value.
template <typename Done>
double waitForMetric(uint16_t port, const std::string& sample, Done done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  double value = metricSample(port, sample);
  while (!done(value) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    value = metricSample(port, sample);
  }
  return value;
}

// Gives up on `abandoned` (a request still running) once argusd runs its query; the client
// returns at once, and argusd, noticing the closed connection, stops the query: it is
// counted as failed (execution error) long before its deadline. (Giving up after a fixed
// wait raced a loaded machine: a client that had not sent its request yet left no query
// to cancel.)
void giveUpAndCheckCancelled(uint16_t port, std::future<Result<cli::HttpReply>>& abandoned, std::atomic<bool>& give_up) {
  REQUIRE(waitForMetric(port, "argus_queries_running", [](double v) { return v >= 1; }) == 1);
  auto gave_up = std::chrono::steady_clock::now();
  give_up = true;
  Result<cli::HttpReply> r = abandoned.get();
  CHECK(r.status().code() == Status::Code::kAborted);
  CHECK(std::chrono::steady_clock::now() - gave_up < std::chrono::seconds(5));
  CHECK(waitForMetric(port, "argus_queries_running", [](double v) { return v == 0; }) == 0);
  CHECK(std::chrono::steady_clock::now() - gave_up < std::chrono::seconds(10));  // its deadline is 30 s or more away
  CHECK(metricSample(port, "argus_query_outcomes_total{outcome=\"execution_error\"}") == 1);
}

}  // namespace

TEST_CASE("hostile queries get clean errors and leave argusd answering") {
  cli::ArgusdProcess argusd;
  argusd.setHttp(true);
  REQUIRE(argusd.start().isOk());
  const uint16_t http = argusd.httpPort();
  testing::sendSyntheticSteps(argusd.ingestPort(), "hostile", kRanks, kSteps);
  const std::string all_steps = "SELECT count(*) FROM steps WHERE job = 'hostile'";
  REQUIRE(count(http, all_steps) == kRanks * kSteps);

  SUBCASE("nesting of every kind stops at the documented depth") {
    refused(http, "SELECT " + repeat("(", 100000) + "1" + repeat(")", 100000), 400, "nested too deeply");
    refused(http, "SELECT " + repeat("- ", 100000) + "1", 400, "nested too deeply");
    refused(http, "SELECT " + repeat("NOT ", 100000) + "true", 400, "nested too deeply");
    refused(http, "SELECT " + repeat("abs(", 50000) + "1" + repeat(")", 50000), 400, "nested too deeply");
    refused(http, "SELECT " + repeat("CASE WHEN true THEN ", 20000) + "1" + repeat(" END", 20000), 400, "nested too deeply");
    refused(http, "SELECT * FROM " + repeat("(SELECT * FROM ", 5000) + "steps" + repeat(")", 5000), 400, "nested too deeply");
    refused(http, "SELECT " + repeat("1 + ", 50000) + "1", 400, "nested too deeply");
  }

  SUBCASE("a 100,000-value IN list is answered, and right") {
    std::string list;
    for (int i = 0; i < 100000; ++i) list += (i ? "," : "") + std::to_string(i % 2 == 0 ? i / 2 : 1000000 + i);
    // Ranks 0..kRanks-1 are all in the list (the even entries count 0, 1, 2, ...).
    CHECK(count(http, all_steps + " AND rank IN (" + list + ")") == kRanks * kSteps);
    CHECK(count(http, all_steps + " AND rank NOT IN (" + list + ")") == 0);
  }

  SUBCASE("thousands of CTEs; a CTE chain stops at the documented depth") {
    std::string ctes = "WITH ";
    for (int i = 0; i < 5000; ++i) ctes += (i ? ", a" : "a") + std::to_string(i) + " AS (SELECT 1)";
    CHECK(count(http, ctes + " SELECT 7") == 7);
    std::string chain = "WITH a0 AS (SELECT 3 AS x)";
    for (int i = 1; i < 3000; ++i) chain += ", a" + std::to_string(i) + " AS (SELECT x FROM a" + std::to_string(i - 1) + ")";
    refused(http, chain + " SELECT x FROM a2999", 400, "nested too deeply");
    CHECK(count(http, chain + " SELECT x FROM a63") == 3);
  }

  SUBCASE("query text past the request body limit") {
    // argusd answers 413 and closes at once; a client still sending may see the close first.
    Result<cli::HttpReply> r = cli::httpRequest("127.0.0.1", http, "POST", "/api/v1/query", "SELECT 1 " + repeat("-- padding\n", 200000));
    if (r.isOk()) CHECK(r->status == 413);
  }

  SUBCASE("memory cap and deadline cancel cleanly") {
    std::string wide = "SELECT " + repeat("iter_ns, ", 2000) + "step FROM steps";
    refused(http, wide, 422, "memory limit", "?memory_limit=1000000");
    refused(http, "SELECT rank, step, signature FROM kernels ORDER BY total_ns", 422, "ORDER BY needs more than the memory limit",
            "?memory_limit=20000");
    refused(http, "SELECT rank, step, signature, count(*) FROM kernels GROUP BY rank, step, signature", 422,
            "GROUP BY needs more than the memory limit", "?memory_limit=20000");
    refused(http, "SELECT * FROM kernels k0 ORDER BY total_ns", 422, "deadline", "?timeout_ms=1");
  }

  SUBCASE("cross joins of large tables stop at the memory cap or the deadline") {
    // Billions of rows from a few thousand: the joins buffer only their right sides, and
    // the deadline is checked per output batch.
    refused(http, "SELECT count(*) FROM kernels a, kernels b, steps c", 422, "deadline", "?timeout_ms=300");
    refused(http, "SELECT count(*) FROM kernels a JOIN kernels b ON a.rank <> b.rank JOIN kernels c ON b.step = c.step", 422, "deadline",
            "?timeout_ms=300");
    // A right side past the cap, in a nested loop and in a hash join; every row of a cross
    // product past the result's cap.
    refused(http, "SELECT count(*) FROM steps a CROSS JOIN kernels b WHERE a.iter_ns < b.total_ns", 422,
            "JOIN needs more than the memory limit", "?memory_limit=20000");
    refused(http, "SELECT count(*) FROM kernels a JOIN kernels b USING (job, rank)", 422, "JOIN needs more than the memory limit",
            "?memory_limit=20000");
    refused(http, "SELECT * FROM kernels a, kernels b", 422, "memory limit", "?memory_limit=5000000");
    CHECK(count(http, all_steps) == kRanks * kSteps);
    CHECK(count(http, "SELECT count(*) FROM steps s JOIN steps r0 ON s.job = r0.job AND s.step = r0.step AND r0.rank = 0 WHERE s.job = 'hostile'") ==
          kRanks * kSteps);
  }

  SUBCASE("a client that gives up cancels its query on the server") {
    // A query that runs for seconds (13 s in a release build); the client abandons it once it runs.
    std::atomic<bool> give_up{false};
    auto abandoned = std::async(std::launch::async, [&] {
      return cli::httpRequest("127.0.0.1", http, "POST", "/api/v1/query?timeout_ms=60000", "SELECT count(*) FROM kernels a, kernels b, steps c",
                              std::chrono::seconds(120), "", &give_up);
    });
    giveUpAndCheckCancelled(http, abandoned, give_up);
    CHECK(count(http, all_steps) == kRanks * kSteps);
  }

  SUBCASE("a Grafana panel whose browser gives up cancels its query on the server") {
    // As above through the Grafana datasource: its queries run with the default 30 s
    // deadline, so a query ended within 10 s is the cancel.
    std::atomic<bool> give_up{false};
    const std::string body = R"({"range":{"from":"2026-01-01T00:00:00Z","to":"2026-01-02T00:00:00Z"},"targets":[)"
                             R"({"refId":"A","type":"table","target":"SELECT count(*) FROM kernels a, kernels b, steps c"}]})";
    auto abandoned = std::async(std::launch::async, [&] {
      return cli::httpRequest("127.0.0.1", http, "POST", "/api/v1/grafana/query", body, std::chrono::seconds(120), "", &give_up);
    });
    giveUpAndCheckCancelled(http, abandoned, give_up);
    CHECK(count(http, all_steps) == kRanks * kSteps);
  }

  SUBCASE("a normal query is answered while hostile ones run") {
    std::string wide = "SELECT " + repeat("iter_ns * 2, ", 3000) + "step FROM steps";
    std::vector<std::future<cli::HttpReply>> heavy;
    for (int i = 0; i < 3; ++i) heavy.push_back(std::async(std::launch::async, [&] { return post(http, wide, "?memory_limit=200000000"); }));
    for (int i = 0; i < 5; ++i) CHECK(count(http, all_steps) == kRanks * kSteps);
    for (auto& f : heavy) {
      cli::HttpReply r = f.get();
      CHECK((r.status == 200 || r.status == 422));
    }
  }

  // Whatever came before, the server is up and still right.
  Result<cli::HttpReply> health = cli::httpRequest("127.0.0.1", http, "GET", "/healthz");
  REQUIRE(health.isOk());
  CHECK(health->status == 200);
  CHECK(count(http, all_steps) == kRanks * kSteps);
  CHECK(argusd.stop() == 0);
}
