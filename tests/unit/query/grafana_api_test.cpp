// The Grafana datasource API through HttpRouter, with request bodies shaped as the simPod
// JSON datasource and SimpleJSON send them (their READMEs; docs/http/grafana.md), over a
// store of 4 ranks x 10 steps with known values:
//   start_ns = T0 + step * 1 s + rank * 1 us, iter_ns = (rank + 1) * 100 ms + step.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "query/http/grafana_time.h"
#include "query/http/http_router.h"
#include "tests/unit/storage/store_test_util.h"

using namespace argus;
using Json = nlohmann::json;

namespace {

constexpr int64_t kT0 = 1'764'000'000'000'000'000;  // 2025-11-24T16:00:00Z
constexpr uint32_t kRanks = 4;
constexpr uint64_t kSteps = 10;

int64_t startNs(uint32_t rank, uint64_t step) {
  return kT0 + static_cast<int64_t>(step) * 1'000'000'000 + rank * 1000;
}
int64_t iterNs(uint32_t rank, uint64_t step) {
  return (rank + 1) * 100'000'000 + static_cast<int64_t>(step);
}

// RFC 3339 text of kT0 + seconds.
std::string timeText(int seconds) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "2025-11-24T%02d:%02d:%02d.000Z", 16 + seconds / 3600, seconds / 60 % 60, seconds % 60);
  return buf;
}

struct Fixture {
  storage::testutil::TempDir dir;
  std::unique_ptr<storage::RocksStore> store = storage::testutil::openStore(dir.path());
  query::HttpRouter router{*store, nullptr};

  Fixture() {
    auto job = store->ensureJob("demo");
    REQUIRE(job.isOk());
    for (uint32_t rank = 0; rank < kRanks; ++rank) {
      std::vector<model::StepRecord> records;
      for (uint64_t step = 0; step < kSteps; ++step) {
        model::StepRecord r;
        r.rank = rank;
        r.step = step;
        r.start_ns = startNs(rank, step);
        r.iter_ns = iterNs(rank, step);
        r.end_ns = r.start_ns + r.iter_ns;
        records.push_back(r);
      }
      model::RankTopology topology;
      topology.rank = rank;
      topology.world_size = kRanks;
      storage::WriteRequest w;
      w.job = *job;
      w.topology = &topology;
      w.records = records;
      REQUIRE(store->write(w).isOk());
    }
  }

  query::HttpResponse post(const std::string& endpoint, const std::string& body) {
    return router.handle({"POST", "/api/v1/grafana" + endpoint, body, ""});
  }
  Json postJson(const std::string& endpoint, const Json& body, int expect = 200) {
    query::HttpResponse r = post(endpoint, body.dump());
    INFO(endpoint << " " << body.dump() << " -> " << r.body);
    CHECK(r.status == expect);
    Json j = Json::parse(r.body, nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    return j;
  }
  // The message of a refused request (status `expect`).
  std::string refusal(const std::string& endpoint, const std::string& body, int expect = 400) {
    query::HttpResponse r = post(endpoint, body);
    INFO(endpoint << " " << body.substr(0, 200) << " -> " << r.body);
    CHECK(r.status == expect);
    Json j = Json::parse(r.body, nullptr, false);
    REQUIRE(j.is_object());
    CHECK(j["message"] == j["error"]);
    return j["error"].get<std::string>();
  }
};

// A /query body as the simPod datasource posts it (README, "/query").
Json simPodQuery(Json targets, int from_s = 0, int to_s = 3600, int max_points = 550) {
  return {{"panelId", 1},
          {"range", {{"from", timeText(from_s)}, {"to", timeText(to_s)}, {"raw", {{"from", "now-6h"}, {"to", "now"}}}}},
          {"rangeRaw", {{"from", "now-6h"}, {"to", "now"}}},
          {"interval", "30s"},
          {"intervalMs", 30000},
          {"maxDataPoints", max_points},
          {"targets", std::move(targets)},
          {"adhocFilters", Json::array()}};
}

}  // namespace

TEST_CASE("Grafana RFC 3339 times") {
  CHECK(query::parseRfc3339Ns("2016-10-31T06:33:44.866Z") == int64_t{1477895624866000000});
  CHECK(query::parseRfc3339Ns("1970-01-01T00:00:00Z") == 0);
  CHECK(query::parseRfc3339Ns("2016-10-31T08:33:44.866+02:00") == int64_t{1477895624866000000});
  CHECK(query::parseRfc3339Ns("2024-02-29T00:00:00.123456789123Z") == int64_t{1709164800123456789});
  for (const char* bad : {"", "now-6h", "2016-10-31", "2016-13-01T00:00:00Z", "2023-02-29T00:00:00Z", "2016-10-31T06:33:44",
                          "1969-12-31T23:59:59Z", "3000-01-01T00:00:00Z", "2016-10-31T06:33:44.Z", "2016-10-31T06:33:44Zjunk"}) {
    CHECK_MESSAGE(!query::parseRfc3339Ns(bad), bad);
  }
}

TEST_CASE_FIXTURE(Fixture, "Grafana test connection, metrics, payload options, search") {
  for (const char* path : {"/api/v1/grafana", "/api/v1/grafana/"}) {
    query::HttpResponse r = router.handle({"GET", path, "", ""});
    CHECK(r.status == 200);
    CHECK(Json::parse(r.body)["status"] == "ok");
  }
  CHECK(post("", "{}").status == 405);
  CHECK(router.handle({"GET", "/api/v1/grafana/query", "", ""}).status == 405);
  CHECK(post("/nowhere", "{}").status == 404);

  for (const Json& body : {Json::object(), Json{{"metric", "iter_ns"}, {"payload", {{"job", "demo"}}}}}) {
    Json metrics = postJson("/metrics", body);
    REQUIRE(metrics.is_array());
    Json iter;
    for (const Json& m : metrics) {
      if (m["value"] == "iter_ns") iter = m;
      CHECK(m["value"] != "start_ns");
    }
    REQUIRE(iter.is_object());
    REQUIRE(iter["payloads"].size() == 3);
    CHECK(iter["payloads"][0]["name"] == "job");
    CHECK(iter["payloads"][1]["type"] == "multi-select");
    CHECK(iter["payloads"][2]["options"].size() == 5);
  }
  CHECK(post("/metrics", "").status == 200);  // the plugin may post no body

  Json jobs = postJson("/metric-payload-options", {{"metric", "iter_ns"}, {"payload", {{"namespace", "x"}}}, {"name", "job"}});
  CHECK(jobs == Json::parse(R"([{"label":"demo","value":"demo"}])"));
  Json ranks = postJson("/metric-payload-options", {{"metric", "iter_ns"}, {"payload", {{"job", "demo"}}}, {"name", "ranks"}});
  REQUIRE(ranks.size() == kRanks);
  CHECK(ranks[3]["value"] == "3");
  CHECK(postJson("/metric-payload-options", {{"metric", "iter_ns"}, {"payload", Json::object()}, {"name", "ranks"}}).empty());
  CHECK(refusal("/metric-payload-options", R"({"metric":"iter_ns","payload":{},"name":"colour"})").find("colour") != std::string::npos);
  CHECK(refusal("/metric-payload-options", R"({"metric":"bogus_ns","payload":{},"name":"job"})").find("bogus_ns") != std::string::npos);
  refusal("/metric-payload-options", R"({"metric":"iter_ns","payload":{}})");

  // SimpleJSON's /search: the metric picker (type-ahead) and variable queries.
  Json all = postJson("/search", {{"target", ""}});
  CHECK(std::find(all.begin(), all.end(), "comm_exposed_ns") != all.end());
  CHECK(postJson("/search", {{"type", "timeseries"}, {"target", "iter"}}) == Json::parse(R"(["iter_ns"])"));
  CHECK(postJson("/search", {{"target", "jobs"}}) == Json::parse(R"(["demo"])"));
  CHECK(postJson("/search", {{"target", "ranks demo"}}) == Json::parse(R"(["0","1","2","3"])"));
  CHECK(postJson("/search", {{"target", "ranks nosuchjob"}}).empty());
}

TEST_CASE_FIXTURE(Fixture, "Grafana step metrics as time series") {
  SUBCASE("aggregated across ranks, every step at its start time") {
    Json r =
        postJson("/query", simPodQuery({{{"target", "iter_ns"}, {"refId", "A"}, {"payload", {{"job", "demo"}, {"aggregate", "max"}}}}}));
    REQUIRE(r.size() == 1);
    CHECK(r[0]["target"] == "iter_ns max");
    REQUIRE(r[0]["datapoints"].size() == kSteps);
    for (uint64_t step = 0; step < kSteps; ++step) {
      CHECK(r[0]["datapoints"][step][0].get<double>() == static_cast<double>(iterNs(kRanks - 1, step)));
      CHECK(r[0]["datapoints"][step][1].get<double>() == doctest::Approx(static_cast<double>(startNs(0, step)) / 1e6));
    }
    Json median =
        postJson("/query", simPodQuery({{{"target", "iter_ns"}, {"refId", "A"}, {"payload", {{"job", "demo"}, {"aggregate", "median"}}}}}));
    CHECK(median[0]["datapoints"][0][0].get<double>() == 250'000'000.0);  // ranks 100, 200, 300, 400 ms
  }

  SUBCASE("one series per rank, restricted to ranks") {
    Json r = postJson(
        "/query",
        simPodQuery(
            {{{"target", "iter_ns"}, {"refId", "A"}, {"payload", {{"job", "demo"}, {"aggregate", "none"}, {"ranks", {"1", "3"}}}}}}));
    REQUIRE(r.size() == 2);
    CHECK(r[0]["target"] == "iter_ns rank 1");
    CHECK(r[1]["target"] == "iter_ns rank 3");
    CHECK(r[1]["datapoints"][2][0].get<double>() == static_cast<double>(iterNs(3, 2)));
  }

  SUBCASE("range and maxDataPoints") {
    Json in_range = postJson("/query", simPodQuery({{{"target", "iter_ns"}, {"payload", {{"job", "demo"}}}}}, 2, 4));
    REQUIRE(in_range[0]["datapoints"].size() == 3);  // steps 2, 3, 4 (rank 0 starts on the second)
    CHECK(in_range[0]["datapoints"][0][1].get<double>() == doctest::Approx(static_cast<double>(startNs(0, 2)) / 1e6));

    // 10 steps in at most 3 points: buckets of 4 steps; max keeps each bucket's worst step.
    Json bucketed =
        postJson("/query", simPodQuery({{{"target", "iter_ns"}, {"payload", {{"job", "demo"}, {"aggregate", "max"}}}}}, 0, 3600, 3));
    REQUIRE(bucketed[0]["datapoints"].size() == 3);
    CHECK(bucketed[0]["datapoints"][0][0].get<double>() == static_cast<double>(iterNs(3, 3)));
    CHECK(bucketed[0]["datapoints"][2][0].get<double>() == static_cast<double>(iterNs(3, 9)));
    CHECK(bucketed[0]["datapoints"][1][1].get<double>() == doctest::Approx(static_cast<double>(startNs(0, 4)) / 1e6));
    Json avg = postJson(
        "/query", simPodQuery({{{"target", "iter_ns"}, {"payload", {{"job", "demo"}, {"aggregate", "avg"}, {"ranks", "0"}}}}}, 0, 3600, 5));
    CHECK(avg[0]["datapoints"][0][0].get<double>() == 100'000'000.5);  // steps 0 and 1 of rank 0

    Json empty = postJson("/query", simPodQuery({{{"target", "iter_ns"}, {"payload", {{"job", "demo"}}}}}, 600, 700));
    REQUIRE(empty.size() == 1);
    CHECK(empty[0]["datapoints"].empty());
  }

  SUBCASE("SimpleJSON targets carry their options in the text; ad hoc filters fill in") {
    Json body = {{"panelId", 1},
                 {"range", {{"from", timeText(0)}, {"to", timeText(3600)}, {"raw", {{"from", "now-6h"}, {"to", "now"}}}}},
                 {"rangeRaw", {{"from", "now-6h"}, {"to", "now"}}},
                 {"interval", "30s"},
                 {"intervalMs", 30000},
                 {"targets",
                  {{{"target", "iter_ns job=demo aggregate=min ranks=1,2"}, {"refId", "A"}, {"type", "timeserie"}},
                   {{"target", "comm_exposed_ns aggregate=avg"}, {"refId", "B"}, {"type", "timeserie"}}}},
                 {"adhocFilters", {{{"key", "job"}, {"operator", "="}, {"value", "demo"}}}},
                 {"format", "json"},
                 {"maxDataPoints", 550}};
    Json r = postJson("/query", body);
    REQUIRE(r.size() == 2);
    CHECK(r[0]["target"] == "iter_ns min");
    CHECK(r[0]["datapoints"][0][0].get<double>() == static_cast<double>(iterNs(1, 0)));
    CHECK(r[1]["target"] == "comm_exposed_ns avg");
    CHECK(r[1]["datapoints"].size() == kSteps);
  }

  SUBCASE("hidden targets are skipped") {
    CHECK(postJson("/query", simPodQuery({{{"target", "iter_ns"}, {"hide", true}}})).empty());
  }
}

TEST_CASE_FIXTURE(Fixture, "Grafana tables from statements, variables, tags, annotations") {
  Json table = postJson("/query", simPodQuery({{{"target",
                                                 "SELECT start_ns AS time, rank, iter_ns, 'r' || rank AS name FROM steps "
                                                 "WHERE job = 'demo' AND step = 1 ORDER BY rank"},
                                                {"refId", "A"},
                                                {"type", "table"}}}));
  REQUIRE(table.size() == 1);
  CHECK(table[0]["type"] == "table");
  CHECK(table[0]["columns"] == Json::parse(R"([{"text":"time","type":"time"},{"text":"rank","type":"number"},)"
                                           R"({"text":"iter_ns","type":"number"},{"text":"name","type":"string"}])"));
  REQUIRE(table[0]["rows"].size() == kRanks);
  CHECK(table[0]["rows"][2][0].get<double>() == doctest::Approx(static_cast<double>(startNs(2, 1)) / 1e6));
  CHECK(table[0]["rows"][2][2] == iterNs(2, 1));
  CHECK(table[0]["rows"][2][3] == "r2");

  // The simPod variable editor posts {payload, range}; its text form is {"target": ...}.
  Json range = {{"from", timeText(0)}, {"to", timeText(60)}, {"raw", {{"from", "now-7d"}, {"to", "now"}}}};
  CHECK(postJson("/variable", {{"payload", {{"target", "jobs"}}}, {"range", range}}) ==
        Json::parse(R"([{"__text":"demo","__value":"demo"}])"));
  CHECK(postJson("/variable", {{"payload", {{"target", "ranks demo"}}}, {"range", range}}).size() == kRanks);
  Json slow = postJson(
      "/variable",
      {{"payload", {{"target", "SELECT rank FROM steps WHERE job = 'demo' AND step = 0 AND iter_ns > 250000000"}}}, {"range", range}});
  CHECK(slow == Json::parse(R"([{"__text":"2","__value":"2"},{"__text":"3","__value":"3"}])"));
  CHECK(refusal("/variable", R"({"payload":{"target":"colours"}})").find("colours") != std::string::npos);
  refusal("/variable", R"({"payload":"jobs"})");

  CHECK(postJson("/tag-keys", Json::object()) == Json::parse(R"([{"type":"string","text":"job"},{"type":"number","text":"rank"}])"));
  CHECK(postJson("/tag-values", {{"key", "job"}}) == Json::parse(R"([{"text":"demo"}])"));
  CHECK(postJson("/tag-values", {{"key", "rank"}}).size() == kRanks);
  refusal("/tag-values", R"({"key":"City"})");
  refusal("/tag-values", "{}");

  // SimpleJSON's annotation request (README, "Annotation API").
  Json annotation = {{"name", "slow steps"},
                     {"datasource", "argusd"},
                     {"iconColor", "rgba(255, 96, 96, 1)"},
                     {"enable", true},
                     {"query",
                      "SELECT min(start_ns) AS time, max(end_ns) AS time_end, 'step ' || step AS text, 'slow' AS title, "
                      "'slow, rank 3' AS tags FROM steps WHERE job = 'demo' GROUP BY step ORDER BY step"}};
  Json notes = postJson("/annotations", {{"range", {{"from", timeText(3)}, {"to", timeText(5)}}},
                                         {"rangeRaw", {{"from", "now-1h"}, {"to", "now"}}},
                                         {"annotation", annotation}});
  REQUIRE(notes.size() == 3);  // steps 3, 4 and 5 start inside the range (both ends included)
  CHECK(notes[0]["annotation"] == annotation);
  CHECK(notes[0]["text"] == "step 3");
  CHECK(notes[0]["title"] == "slow");
  CHECK(notes[0]["tags"] == Json::parse(R"(["slow","rank 3"])"));
  CHECK(notes[0]["isRegion"] == true);
  CHECK(notes[0]["time"].get<double>() == doctest::Approx(static_cast<double>(startNs(0, 3)) / 1e6));
  annotation["query"] = "SELECT step AS time FROM steps WHERE job = 'demo'";
  CHECK(refusal("/annotations", Json{{"annotation", annotation}}.dump()).find("text") != std::string::npos);
  annotation["query"] = "SELECT 'x' AS time, 'y' AS text";
  CHECK(refusal("/annotations", Json{{"annotation", annotation}}.dump()).find("BIGINT") != std::string::npos);
  refusal("/annotations", R"({"annotation":{"query":"#deploy"}})");
}

TEST_CASE_FIXTURE(Fixture, "Grafana refuses bad bodies with 400 and a message") {
  const std::string metric = R"({"target":"iter_ns","payload":{"job":"demo"}})";
  auto query = [&](const std::string& targets, const std::string& extra = "") {
    return R"({"range":{"from":"2025-11-24T16:00:00Z","to":"2025-11-24T17:00:00Z"},)" + extra + R"("targets":)" + targets + "}";
  };
  CHECK(refusal("/query", "").find("empty") != std::string::npos);
  CHECK(refusal("/query", "{not json").find("not valid JSON") != std::string::npos);
  CHECK(refusal("/query", "[1,2]").find("object") != std::string::npos);
  CHECK(refusal("/query", "{}").find("targets") != std::string::npos);
  CHECK(refusal("/query", R"({"targets":{"target":"iter_ns"}})").find("targets") != std::string::npos);
  CHECK(refusal("/query", query("[42]")).find("targets[0]") != std::string::npos);
  CHECK(refusal("/query", query(R"([{"refId":"A"}])")).find("target A") != std::string::npos);
  CHECK(refusal("/query", query(R"([{"target":7}])")).find("string") != std::string::npos);
  CHECK(refusal("/query", query(R"([{"target":"upper_50","refId":"A"}])")).find("unknown metric 'upper_50'") != std::string::npos);
  CHECK(refusal("/query", query(R"([{"target":"iter_ns"}])")).find("needs a job") != std::string::npos);
  CHECK(refusal("/query", query(R"([{"target":"iter_ns","payload":{"job":"no such job!"}}])")).find("invalid job") != std::string::npos);
  CHECK(refusal("/query", query(R"([{"target":"iter_ns","payload":{"job":"demo","aggregate":"p99"}}])")).find("aggregate") !=
        std::string::npos);
  CHECK(refusal("/query", query(R"([{"target":"iter_ns","payload":{"job":"demo","ranks":"1,x"}}])")).find("bad rank") != std::string::npos);
  CHECK(refusal("/query", query(R"([{"target":"iter_ns","payload":{"job":"demo","ranks":-1}}])")).find("ranks") != std::string::npos);
  CHECK(refusal("/query", query(R"([{"target":"iter_ns","payload":{"job":"demo","colour":"red"}}])")).find("colour") != std::string::npos);
  CHECK(refusal("/query", query(R"([{"target":"iter_ns","payload":"job=demo"}])")).find("payload") != std::string::npos);
  CHECK(refusal("/query", query(R"([{"target":"iter_ns job"}])")).find("key=value") != std::string::npos);
  CHECK(refusal("/query", query(R"([{"target":"iter_ns","type":"graph","payload":{"job":"demo"}}])")).find("type") != std::string::npos);
  CHECK(refusal("/query", query("[" + metric + "]", R"("maxDataPoints":"many",)")).find("maxDataPoints") != std::string::npos);
  CHECK(refusal("/query", query("[" + metric + "]", R"("maxDataPoints":0,)")).find("maxDataPoints") != std::string::npos);
  CHECK(refusal("/query", query("[" + metric + "]", R"("maxDataPoints":1e12,)")).find("maxDataPoints") != std::string::npos);
  CHECK(refusal("/query", query("[" + metric + "]", R"("intervalMs":"30s",)")).find("intervalMs") != std::string::npos);
  CHECK(refusal("/query", query("[" + metric + "]", R"("adhocFilters":[{"key":"City","operator":"=","value":"Berlin"}],)")).find("City") !=
        std::string::npos);
  CHECK(refusal("/query", query("[" + metric + "]", R"("adhocFilters":[{"key":"job","operator":"=~","value":"d.*"}],)")).find("operator") !=
        std::string::npos);
  CHECK(refusal("/query", R"({"range":{"from":"now-6h","to":"now"},"targets":[]})").find("range.from") != std::string::npos);
  CHECK(refusal("/query", R"({"range":{"from":"2025-11-24T17:00:00Z","to":"2025-11-24T16:00:00Z"},"targets":[]})").find("after") !=
        std::string::npos);
  CHECK(refusal("/query", R"({"range":{"from":"2025-11-24T17:00:00Z"},"targets":[]})").find("range.to") != std::string::npos);

  // Statements: the engine's errors, 400 for the statement's fault, 422 while running.
  CHECK(refusal("/query", query(R"([{"target":"SELECT nope FROM steps","refId":"B"}])")).find("target B: binder error") !=
        std::string::npos);
  CHECK(refusal("/query", query(R"([{"target":"SELECT FROM"}])")).find("parser error") != std::string::npos);
  CHECK(refusal("/query", query(R"j([{"target":"SELECT CAST('x' AS BIGINT)"}])j"), 422).find("execution error") != std::string::npos);

  // Hostile sizes: many targets, deep nesting, a long name.
  std::string many = "[";
  for (int i = 0; i < 101; ++i) many += (i ? "," : "") + metric;
  CHECK(refusal("/query", query(many + "]")).find("at most 100") != std::string::npos);
  CHECK(refusal("/query", std::string(200'000, '[') + std::string(200'000, ']')).find("object") != std::string::npos);
  CHECK(refusal("/query", query(R"([{"target":")" + std::string(100'000, 'x') + R"("}])")).find("unknown metric") != std::string::npos);
  CHECK(refusal("/search", R"({"target":["jobs"]})").find("string") != std::string::npos);
}

TEST_CASE_FIXTURE(Fixture, "/metrics counts query latencies, outcomes and Grafana requests") {
  postJson("/query", simPodQuery({{{"target", "iter_ns"}, {"payload", {{"job", "demo"}}}}}));
  refusal("/query", simPodQuery({{{"target", "SELECT nope"}}}).dump());
  postJson("/tag-keys", Json::object());
  std::string metrics = router.handle({"GET", "/metrics", "", ""}).body;
  CHECK(metrics.find("# TYPE argus_query_duration_seconds histogram") != std::string::npos);
  CHECK(metrics.find("argus_query_duration_seconds_count 3") != std::string::npos);  // bounds + series + the failed statement
  CHECK(metrics.find("argus_query_duration_seconds_bucket{le=\"+Inf\"} 3") != std::string::npos);
  CHECK(metrics.find("argus_query_outcomes_total{outcome=\"ok\"} 2") != std::string::npos);
  CHECK(metrics.find("argus_query_outcomes_total{outcome=\"binder_error\"} 1") != std::string::npos);
  CHECK(metrics.find("argus_grafana_requests_total{endpoint=\"query\"} 2") != std::string::npos);
  CHECK(metrics.find("argus_grafana_request_errors_total{endpoint=\"query\"} 1") != std::string::npos);
  CHECK(metrics.find("argus_grafana_requests_total{endpoint=\"tag-keys\"} 1") != std::string::npos);
}
