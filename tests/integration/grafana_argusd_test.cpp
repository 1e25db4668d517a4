// The Grafana datasource against a real argusd on loopback, with --http-tokens: the
// provisioned dashboard's every query (as the simPod plugin posts it), bearer tokens
// (401/403/200), queries from several threads at once, and /metrics' latency histogram.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/http_client.h"
#include "tests/integration/ingest_test_util.h"

using namespace argus;
using Json = nlohmann::json;

namespace {

constexpr uint32_t kRanks = 4;
constexpr uint32_t kSteps = 40;
const std::string kJob = "grafana-job";
const std::string kReadToken = "r34d-t0k3n";
const std::string kControlToken = "c0ntr0l-t0k3n";
// The synthetic steps start at 2023-11-14T22:13:20Z (SyntheticOptions::start_ns).
const Json kRange = {
    {"from", "2023-11-14T22:00:00.000Z"}, {"to", "2023-11-15T22:00:00.000Z"}, {"raw", {{"from", "now-6h"}, {"to", "now"}}}};
constexpr int64_t kFromMs = 1'699'999'200'000, kToMs = 1'700'085'600'000;

cli::HttpReply request(uint16_t port, const std::string& method, const std::string& target, const std::string& body,
                       const std::string& token) {
  Result<cli::HttpReply> reply = cli::httpRequest("127.0.0.1", port, method, target, body, std::chrono::seconds(30), token);
  REQUIRE_MESSAGE(reply.isOk(), reply.status().toString());
  return *reply;
}

// Grafana's interpolation of the dashboard's variables, for job kJob and every rank.
std::string interpolate(std::string text) {
  const std::pair<std::string, std::string> vars[] = {
      {"${rank:csv}", "*"}, {"$job", kJob}, {"$__from", std::to_string(kFromMs)}, {"$__to", std::to_string(kToMs)}};
  for (const auto& [name, value] : vars) {
    for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + value.size()))
      text.replace(at, name.size(), value);
  }
  return text;
}

// A dashboard target as the simPod plugin posts it: payload text parsed as JSON after
// interpolation ({} when empty).
Json pluginTarget(const Json& target) {
  Json out = {{"refId", target.value("refId", "A")}, {"target", interpolate(target["target"].get<std::string>())}};
  std::string payload = target.value("payload", "");
  out["payload"] = payload.empty() ? Json::object() : Json::parse(interpolate(payload));
  return out;
}

Json queryBody(const Json& targets) {
  return {{"panelId", 1},        {"range", kRange},      {"rangeRaw", kRange["raw"]}, {"interval", "30s"},
          {"intervalMs", 30000}, {"maxDataPoints", 550}, {"targets", targets},        {"adhocFilters", Json::array()}};
}

}  // namespace

TEST_CASE("Grafana datasource on a real argusd: dashboard queries, tokens, concurrency, metrics") {
  cli::ArgusdProcess argusd;
  const std::string tokens_path = argusd.workDir() + "/http-tokens";
  {
    std::ofstream tokens(tokens_path);
    tokens << "# grafana test\nread " << kReadToken << "\ncontrol " << kControlToken << "\n";
  }
  argusd.setArgs({"--http-tokens", tokens_path});
  argusd.setHttp(true);
  REQUIRE_MESSAGE(argusd.start().isOk(), argusd.stderrTail());
  const uint16_t http = argusd.httpPort();
  testing::sendSyntheticSteps(argusd.ingestPort(), kJob, kRanks, kSteps);

  SUBCASE("tokens: 401 without, 403 for a read token on a control endpoint, 200 with") {
    cli::HttpReply none = request(http, "POST", "/api/v1/grafana/query", "{}", "");
    CHECK(none.status == 401);
    CHECK(request(http, "GET", "/api/v1/grafana", "", "wrong").status == 401);
    CHECK(request(http, "GET", "/api/v1/grafana", "", kReadToken).status == 200);
    CHECK(request(http, "GET", "/api/v1/jobs", "", kReadToken).status == 200);
    const std::string dump = "/api/v1/jobs/" + kJob + "/flight-recorder?from_step=1&to_step=2";
    CHECK(request(http, "POST", dump, "", kReadToken).status == 403);
    int control = request(http, "POST", dump, "", kControlToken).status;
    CHECK((control == 202 || control == 404));  // allowed; the senders have gone
    CHECK(request(http, "GET", "/healthz", "", "").status == 200);
    CHECK(request(http, "GET", "/metrics", "", "").status == 200);
  }

  SUBCASE("argus query and flight-recorder send the token of --token or $ARGUS_HTTP_TOKEN") {
    const std::string server = "--server 127.0.0.1:" + std::to_string(http) + " ";
    const std::string sql = "\"SELECT count(*) AS n FROM steps\"";
    testing::RunResult without = testing::runArgus("query --format csv " + server + sql);
    CHECK(without.exit_code == 1);
    CHECK(without.output.find("Authorization: Bearer") != std::string::npos);
    testing::RunResult flag = testing::runArgus("query --format csv --token " + std::string(kReadToken) + " " + server + sql);
    INFO(flag.output);
    CHECK(flag.exit_code == 0);
    CHECK(flag.output == "n\r\n" + std::to_string(kRanks * kSteps) + "\r\n");
    testing::RunResult env = testing::runArgus("query --format csv " + server + sql, true, "ARGUS_HTTP_TOKEN=" + std::string(kReadToken));
    CHECK(env.output == flag.output);
    const std::string dump = "flight-recorder " + server + "--job " + kJob + " --from-step 1 --to-step 2";
    CHECK(testing::runArgus(dump + " --token " + std::string(kReadToken)).output.find("403") != std::string::npos);
    CHECK(testing::runArgus(dump + " --token " + std::string(kControlToken)).output.find("403") == std::string::npos);
  }

  SUBCASE("every query of the provisioned dashboard is accepted") {
    std::filesystem::path path = std::filesystem::path(__FILE__).parent_path() / "../../grafana/dashboards/job-overview.json";
    std::ifstream in(path);
    REQUIRE_MESSAGE(in, path);
    Json dashboard = Json::parse(in, nullptr, false);
    REQUIRE_FALSE(dashboard.is_discarded());
    size_t checked = 0;
    auto post = [&](const std::string& endpoint, const Json& body) {
      cli::HttpReply r = request(http, "POST", "/api/v1/grafana" + endpoint, body.dump(), kReadToken);
      INFO(endpoint << " " << body.dump() << " -> " << r.body.substr(0, 2000));
      CHECK(r.status == 200);
      Json answer = Json::parse(r.body, nullptr, false);
      CHECK(answer.is_array());
      CHECK_FALSE(answer.empty());
      ++checked;
      return answer;
    };
    for (const Json& panel : dashboard["panels"]) {
      for (const Json& target : panel["targets"]) post("/query", queryBody(Json::array({pluginTarget(target)})));
    }
    for (const Json& annotation : dashboard["annotations"]["list"]) {
      if (annotation.contains("target")) {
        // Annotations from the plugin are /query targets; some windows have none.
        cli::HttpReply r =
            request(http, "POST", "/api/v1/grafana/query", queryBody(Json::array({pluginTarget(annotation["target"])})).dump(), kReadToken);
        INFO(annotation.dump() << " -> " << r.body);
        CHECK(r.status == 200);
        ++checked;
      }
    }
    for (const Json& variable : dashboard["templating"]["list"]) {
      Json values =
          post("/variable", {{"payload", {{"target", interpolate(variable["query"]["query"].get<std::string>())}}}, {"range", kRange}});
      if (variable["name"] == "job") CHECK(values[0]["__value"] == kJob);
      if (variable["name"] == "rank") CHECK(values.size() == kRanks);
    }
    CHECK(checked >= 8);
  }

  SUBCASE("queries from several threads at once, then the latency histogram") {
    constexpr int kThreads = 6, kEach = 10;
    std::atomic<int> ok{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kEach; ++i) {
          Json target = {{"refId", "A"},
                         {"target", (i % 2) ? "iter_ns" : "compute_ns"},
                         {"payload", {{"job", kJob}, {"aggregate", t % 2 ? "median" : "none"}}}};
          Result<cli::HttpReply> r = cli::httpRequest("127.0.0.1", http, "POST", "/api/v1/grafana/query",
                                                      queryBody(Json::array({target})).dump(), std::chrono::seconds(60), kReadToken);
          if (!r.isOk() || r->status != 200) continue;
          Json series = Json::parse(r->body, nullptr, false);
          if (series.is_array() && !series.empty() && series[0]["datapoints"].size() == kSteps) ok++;
        }
      });
    }
    for (auto& t : threads) t.join();
    CHECK(ok == kThreads * kEach);
    cli::HttpReply metrics = request(http, "GET", "/metrics", "", "");
    CHECK(metrics.body.find("# TYPE argus_query_duration_seconds histogram") != std::string::npos);
    // Each series is two statements (step bounds, then the series).
    CHECK(metrics.body.find("argus_query_duration_seconds_count " + std::to_string(2 * kThreads * kEach)) != std::string::npos);
    CHECK(metrics.body.find("argus_query_outcomes_total{outcome=\"ok\"} " + std::to_string(2 * kThreads * kEach)) != std::string::npos);
    CHECK(metrics.body.find("argus_grafana_requests_total{endpoint=\"query\"} " + std::to_string(kThreads * kEach)) != std::string::npos);
  }

  CHECK(argusd.stop() == 0);
}
