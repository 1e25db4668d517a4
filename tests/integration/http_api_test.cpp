// argusd's HTTP surface against a real argusd on loopback: health, metrics, jobs, scans,
// kernel names, and the refusals (bad parameters, unknown job, wrong method, oversized).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli/http_client.h"
#include "tests/integration/ingest_test_util.h"

using namespace argus;
using Json = nlohmann::json;

namespace {

constexpr uint32_t kRanks = 3;
constexpr uint32_t kSteps = 12;

cli::HttpReply get(uint16_t port, const std::string& target, const std::string& method = "GET") {
  Result<cli::HttpReply> reply = cli::httpRequest("127.0.0.1", port, method, target);
  REQUIRE_MESSAGE(reply.isOk(), reply.status().toString());
  return *reply;
}

Json getJson(uint16_t port, const std::string& target, int expect_status = 200) {
  cli::HttpReply reply = get(port, target);
  INFO(target << " -> " << reply.body);
  CHECK(reply.status == expect_status);
  Json body = Json::parse(reply.body, nullptr, false);
  REQUIRE_FALSE(body.is_discarded());
  return body;
}

}  // namespace

TEST_CASE("HTTP API answers health, metrics, jobs, scans and kernel names, and refuses bad requests") {
  cli::ArgusdProcess argusd;
  argusd.setHttp(true);
  REQUIRE(argusd.start().isOk());
  const uint16_t http = argusd.httpPort();
  REQUIRE(http != 0);
  std::vector<model::KernelDictEntry> kernels = testing::sendSyntheticSteps(argusd.ingestPort(), "http-job", kRanks, kSteps);

  SUBCASE("health and metrics") {
    cli::HttpReply health = get(http, "/healthz");
    CHECK(health.status == 200);
    CHECK(health.body == "ok\n");
    cli::HttpReply metrics = get(http, "/metrics");
    CHECK(metrics.status == 200);
    CHECK(metrics.body.find("# TYPE argus_store_bytes gauge") != std::string::npos);
    CHECK(metrics.body.find("argus_ingest_records_total " + std::to_string(kRanks * kSteps)) != std::string::npos);
  }

  SUBCASE("jobs") {
    Json jobs = getJson(http, "/api/v1/jobs");
    REQUIRE(jobs["jobs"].size() == 1);
    CHECK(jobs["jobs"][0]["name"] == "http-job");
  }

  SUBCASE("scan with columns, ranks, step range and limit") {
    Json all = getJson(http, "/api/v1/scan?job=http-job");
    CHECK(all["stats"]["rows"] == kRanks * kSteps);
    CHECK(all["columns"][0]["name"] == "rank");

    Json some = getJson(http, "/api/v1/scan?job=http-job&table=steps&columns=rank,step,iter_ns&ranks=1,2&from_step=3&to_step=5");
    REQUIRE(some["rows"].size() == 4);
    CHECK(some["columns"].size() == 3);
    CHECK(some["rows"][0][1] == 3);
    CHECK(some["rows"][3][0] == 2);
    CHECK(some["rows"][3][1] == 4);

    Json limited = getJson(http, "/api/v1/scan?job=http-job&limit=5");
    CHECK(limited["rows"].size() == 5);
    CHECK(limited["stats"]["truncated"] == true);

    Json ks = getJson(http, "/api/v1/scan?job=http-job&table=kernels&columns=signature,count,hist&ranks=0&from_step=0&to_step=1");
    REQUIRE(ks["rows"].size() == 16);
    CHECK(ks["columns"][0]["type"] == "id");
    CHECK(ks["columns"][1]["type"] == "uint64");
    CHECK(ks["rows"][0][0].is_string());
    CHECK(ks["rows"][0][2]["count"] == ks["rows"][0][1]);
  }

  SUBCASE("kernel names by signature") {
    const model::KernelDictEntry& k = kernels.front();
    Json name = getJson(http, "/api/v1/kernels?job=http-job&signature=" + std::to_string(k.signature));
    CHECK(name["name"] == k.name);
    CHECK(name["grid"][0] == k.geometry.grid_x);
    getJson(http, "/api/v1/kernels?job=http-job&signature=12345", 404);
    getJson(http, "/api/v1/kernels?job=http-job", 400);
  }

  SUBCASE("refusals name the cause") {
    CHECK(getJson(http, "/api/v1/scan", 400)["error"].get<std::string>().find("'job'") != std::string::npos);
    CHECK(getJson(http, "/api/v1/scan?job=nope", 404)["error"].get<std::string>().find("nope") != std::string::npos);
    CHECK(getJson(http, "/api/v1/scan?job=http-job&table=bogus", 400)["error"].get<std::string>().find("bogus") != std::string::npos);
    CHECK(getJson(http, "/api/v1/scan?job=http-job&columns=rank,nonexistent", 400)["error"].get<std::string>().find("nonexistent") !=
          std::string::npos);
    getJson(http, "/api/v1/scan?job=http-job&from_step=-1", 400);
    getJson(http, "/api/v1/scan?job=http-job&ranks=1,x", 400);
    getJson(http, "/api/v1/scan?job=http-job&limit=99999999", 400);
    getJson(http, "/nowhere", 404);
    CHECK(get(http, "/api/v1/jobs", "DELETE").status == 405);
    // A header larger than the limit gets 413 and argusd keeps serving.
    cli::HttpReply big = get(http, "/api/v1/jobs?pad=" + std::string(20000, 'x'));
    CHECK(big.status == 413);
    CHECK(get(http, "/healthz").status == 200);
  }

  CHECK(argusd.stop() == 0);
}

TEST_CASE("an HTTP client facing a server that went away gets an error, not a hang") {
  cli::ArgusdProcess argusd;
  argusd.setHttp(true);
  REQUIRE(argusd.start().isOk());
  uint16_t http = argusd.httpPort();
  CHECK(argusd.stop() == 0);
  Result<cli::HttpReply> reply = cli::httpRequest("127.0.0.1", http, "GET", "/healthz", {}, std::chrono::seconds(2));
  CHECK_FALSE(reply.isOk());
  CHECK(reply.status().code() == Status::Code::kUnavailable);
}
