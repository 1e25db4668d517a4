// argus query as a user runs it: embedded on a data directory (table, CSV, JSON, errors with
// a caret, deadline and memory cap, bad options), and against a real argusd through
// POST /api/v1/query (the same JSON; query text or a {"q": ...} body; 400/422/405 answers), including embedded reads of a
// directory argusd is running on.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli/http_client.h"
#include "storage/store.h"
#include "tests/integration/ingest_test_util.h"

using namespace argus;
using argus::testing::RunResult;
using argus::testing::runArgus;
using Json = nlohmann::json;

namespace {

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// Two ranks x 20 steps of job "q": the first 16 steps sealed into chunks, the rest in head.
std::string makeStore() {
  std::string dir = cli::makeTempDir("argus-query-cli");
  storage::StoreOptions o;
  o.block_steps = 16;
  o.sync_wal = false;
  auto store = storage::Store::open(dir + "/data", o);
  REQUIRE(store.isOk());
  auto job = (*store)->ensureJob("q");
  REQUIRE(job.isOk());
  for (uint32_t rank = 0; rank < 2; ++rank) {
    simulate::SyntheticSteps gen(rank, 4);
    std::vector<model::StepRecord> recs;
    for (int s = 0; s < 20; ++s) recs.push_back(gen.next());
    storage::WriteRequest w;
    w.job = *job;
    w.records = recs;
    REQUIRE((*store)->write(w).isOk());
  }
  REQUIRE((*store)->sealReady().isOk());
  return dir;
}

}  // namespace

TEST_CASE("argus query on a data directory: formats, errors, limits") {
  std::string dir = makeStore();
  std::string data = "--data " + dir + "/data ";

  SUBCASE("table") {
    RunResult r = runArgus("query " + data + "\"SELECT rank, count(*), min(step), max(step) FROM steps WHERE job = 'q' GROUP BY rank ORDER BY rank\"");
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.output, "  rank  count(*)  min(step)  max(step)\n"));
    CHECK(contains(r.output, "     0        20          0         19\n"));
    CHECK(contains(r.output, "     1        20          0         19\n"));
    CHECK(contains(r.output, "(2 rows)"));
  }
  SUBCASE("csv") {
    RunResult r = runArgus("query " + data + "--format csv \"SELECT rank, count(*) AS n, 'a,b' AS s, NULL AS z FROM steps GROUP BY rank ORDER BY rank\"", false);
    CHECK(r.exit_code == 0);
    CHECK(r.output == "rank,n,s,z\r\n0,20,\"a,b\",\r\n1,20,\"a,b\",\r\n");
  }
  SUBCASE("json") {
    RunResult r = runArgus("query " + data + "--format json \"SELECT step, max(iter_ns) > 0 AS positive, avg(iter_ns) AS avg_ns FROM steps WHERE step BETWEEN 14 AND 17 GROUP BY step ORDER BY step\"", false);
    REQUIRE(r.exit_code == 0);
    Json j = Json::parse(r.output, nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    CHECK(j["columns"] == Json::parse(R"([{"name":"step","type":"BIGINT"},{"name":"positive","type":"BOOLEAN"},{"name":"avg_ns","type":"DOUBLE"}])"));
    REQUIRE(j["rows"].size() == 4);
    CHECK(j["rows"][0][0] == 14);
    CHECK(j["rows"][3][1] == true);
    CHECK(j["rows"][3][2].is_number());
    CHECK(j["stats"]["rows"] == 4);
    CHECK(j["stats"]["rows_scanned"] == 8);  // pushdown: 4 steps x 2 ranks
    CHECK(j["stats"]["jobs_scanned"] == 1);
  }
  SUBCASE("stats on stderr") {
    RunResult r = runArgus("query " + data + "--stats \"SELECT count(*) FROM steps\"");
    CHECK(r.exit_code == 0);
    CHECK(contains(r.output, "scanned 40 rows"));
  }
  SUBCASE("an error names the position, shows a caret, exits 1") {
    RunResult r = runArgus("query " + data + "\"SELECT rank FROM steps WHERE itr_ns > 0\"");
    CHECK(r.exit_code == 1);
    CHECK(contains(r.output, "argus query: binder error at 1:30: no column 'itr_ns' in table steps; did you mean 'iter_ns'?\n"
                             "  SELECT rank FROM steps WHERE itr_ns > 0\n"
                             "                               ^\n"));
    RunResult p = runArgus("query " + data + "\"SELECT rank FORM steps\"");
    CHECK(p.exit_code == 1);
    CHECK(contains(p.output, "parser error at 1:13"));
    RunResult e = runArgus("query " + data + "\"SELECT iter_ns * 9223372036854775807 FROM steps\"");
    CHECK(e.exit_code == 1);
    CHECK(contains(e.output, "execution error at 1:16: BIGINT overflow in '*'"));
  }
  SUBCASE("deadline and memory cap") {
    RunResult t = runArgus("query " + data + "--timeout 0s \"SELECT count(*) FROM steps\"");
    CHECK(t.exit_code == 1);
    CHECK(contains(t.output, "query cancelled: it ran past its deadline of 0 ms"));
    RunResult m = runArgus("query " + data + "--memory 1KiB \"SELECT * FROM kernels\"");
    CHECK(m.exit_code == 1);
    CHECK(contains(m.output, "needs more than the memory limit of 1.0 KiB"));
  }
  SUBCASE("bad options and a missing directory") {
    CHECK(runArgus("query \"SELECT 1\"").exit_code == 2);
    CHECK(runArgus("query " + data + "--server 127.0.0.1:1 \"SELECT 1\"").exit_code == 2);
    CHECK(runArgus("query " + data + "--format xml \"SELECT 1\"").exit_code == 2);
    CHECK(runArgus("query " + data + "--memory lots \"SELECT 1\"").exit_code == 2);
    RunResult missing = runArgus("query --data " + dir + "/nope \"SELECT 1\"");
    CHECK(missing.exit_code == 1);
    CHECK(contains(missing.output, "cannot open"));
  }
  cli::removeTree(dir);
}

TEST_CASE("argus query --server and POST /api/v1/query against a real argusd") {
  cli::ArgusdProcess argusd;
  argusd.setHttp(true);
  REQUIRE(argusd.start().isOk());
  const uint16_t http = argusd.httpPort();
  for (uint32_t rank = 0; rank < 3; ++rank) {
    simulate::SyntheticSteps gen(rank, 8);
    wire::StepSender sender(testing::senderOptions(argusd.ingestPort(), "served", rank));
    testing::addDictionary(sender, gen);
    for (int i = 0; i < 10; ++i) REQUIRE(sender.send(gen.next()).isOk());
    REQUIRE(sender.close(std::chrono::seconds(30)).isOk());
  }
  std::string server = "--server 127.0.0.1:" + std::to_string(http) + " ";

  SUBCASE("table and JSON through the server") {
    RunResult r = runArgus("query " + server + "\"SELECT rank, count(*) FROM steps WHERE job = 'served' GROUP BY rank ORDER BY rank\"");
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.output, "     2        10\n"));
    CHECK(contains(r.output, "(3 rows)"));
    RunResult j = runArgus("query " + server + "--format json \"SELECT signature, hist FROM kernels WHERE rank = 0 AND step = 0 LIMIT 1\"", false);
    REQUIRE(j.exit_code == 0);
    Json body = Json::parse(j.output);
    CHECK(body["columns"][0]["type"] == "ID");
    CHECK(body["rows"][0][0].is_string());
    CHECK(body["rows"][0][1]["count"].is_number());
  }
  SUBCASE("errors through the server keep their position") {
    RunResult r = runArgus("query " + server + "\"SELECT nope FROM steps\"");
    CHECK(r.exit_code == 1);
    CHECK(contains(r.output, "binder error at 1:8: no column 'nope' in table steps\n  SELECT nope FROM steps\n         ^"));
  }
  SUBCASE("the HTTP endpoint") {
    auto post = [&](const std::string& target, const std::string& sql) {
      auto reply = cli::httpRequest("127.0.0.1", http, "POST", target, sql);
      REQUIRE(reply.isOk());
      return *reply;
    };
    cli::HttpReply ok = post("/api/v1/query?format=csv", "SELECT count(*) AS n FROM steps");
    CHECK(ok.status == 200);
    CHECK(ok.body == "n\r\n30\r\n");
    cli::HttpReply bad = post("/api/v1/query", "SELECT\n  nope FROM steps");
    CHECK(bad.status == 400);
    Json e = Json::parse(bad.body);
    CHECK(e["kind"] == "binder");
    CHECK(e["line"] == 2);
    CHECK(e["column"] == 3);
    cli::HttpReply exec = post("/api/v1/query", "SELECT 9223372036854775807 + step FROM steps");
    CHECK(exec.status == 422);
    CHECK(Json::parse(exec.body)["kind"] == "execution");
    CHECK(post("/api/v1/query?timeout_ms=0", "SELECT 1").status == 422);
    CHECK(post("/api/v1/query?timeout_ms=999999999", "SELECT 1").status == 400);
    CHECK(post("/api/v1/query?format=xml", "SELECT 1").status == 400);
    // A JSON body {"q": ...}: its members override the URL parameters.
    cli::HttpReply json_ok = post("/api/v1/query?format=json", R"( {"q": "SELECT count(*) AS n FROM steps", "format": "csv"})");
    CHECK(json_ok.status == 200);
    CHECK(json_ok.body == "n\r\n30\r\n");
    CHECK(post("/api/v1/query", R"({"q": "SELECT 1", "timeout_ms": 0})").status == 422);
    for (const char* broken : {R"({"q": 1})", R"({"sql": "SELECT 1"})", R"({"q": "SELECT 1", "timeout_ms": -1})", "{\"q\": ", "{}"}) {
      cli::HttpReply r = post("/api/v1/query", broken);
      INFO(broken << " -> " << r.body);
      CHECK(r.status == 400);
      CHECK(Json::parse(r.body)["error"].get<std::string>().starts_with("query: "));
    }
    auto get = cli::httpRequest("127.0.0.1", http, "GET", "/api/v1/query");
    REQUIRE(get.isOk());
    CHECK(get->status == 405);
    auto metrics = cli::httpRequest("127.0.0.1", http, "GET", "/metrics");
    REQUIRE(metrics.isOk());
    CHECK(contains(metrics->body, "argus_http_queries_total"));
  }
  SUBCASE("embedded, read-only, while argusd runs on the directory") {
    RunResult r = runArgus("query --data " + argusd.dataDir() + " \"SELECT count(*) FROM steps WHERE job = 'served'\"");
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.output, "30"));
  }
}
