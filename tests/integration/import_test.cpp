// `argus import kineto` as a user runs it: two real dlrm ranks into a running argusd, read
// back through the HTTP scan; into a data dir with one bad file among good ones; --stats json.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/argusd_process.h"
#include "cli/http_client.h"
#include "ingest_test_util.h"

using namespace argus;
using argus::testing::RunResult;
using argus::testing::runArgus;

namespace {

std::string dlrm(int rank) {
  return std::string(std::getenv("ARGUS_SHARED_DATA")) + "/kineto/dlrm-8rank-v100/rank-" + std::to_string(rank) + ".json.gz";
}

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

}  // namespace

TEST_CASE("import kineto sends two dlrm ranks to argusd; the HTTP scan returns their steps") {
  cli::ArgusdProcess argusd;
  argusd.setHttp(true);
  Status s = argusd.start();
  REQUIRE_MESSAGE(s.isOk(), s.toString() << "\n" << argusd.stderrTail());
  RunResult r = runArgus("import kineto --job dlrm --server 127.0.0.1:" + std::to_string(argusd.ingestPort()) + " " + dlrm(0) + " " + dlrm(1));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "rank-0.json.gz: rank 0, 1 steps"));
  CHECK(contains(r.output, "rank-1.json.gz: rank 1, 1 steps"));

  auto reply = cli::httpRequest("127.0.0.1", argusd.httpPort(), "GET", "/api/v1/scan?job=dlrm&table=steps&columns=rank,step,iter_ns");
  REQUIRE(reply.isOk());
  REQUIRE(reply->status == 200);
  nlohmann::json body = nlohmann::json::parse(reply->body);
  INFO(reply->body);
  REQUIRE(body["rows"].size() == 2);
  // ProfilerStep#10 of each rank; iter_ns is the annotation's dur in ns (14455 us, 19901 us).
  CHECK(body["rows"][0] == nlohmann::json::array({0, 10, 14455000}));
  CHECK(body["rows"][1] == nlohmann::json::array({1, 10, 19901000}));

  auto kernels = cli::httpRequest("127.0.0.1", argusd.httpPort(), "GET", "/api/v1/scan?job=dlrm&table=kernels&ranks=0&columns=count");
  REQUIRE(kernels.isOk());
  nlohmann::json kbody = nlohmann::json::parse(kernels->body);
  uint64_t count = 0;
  for (const auto& row : kbody["rows"]) count += row[0].get<uint64_t>();
  CHECK(count == 245 + 16);  // 245 kernels and 16 memcpys of rank 0, all inside ProfilerStep#10
  CHECK(argusd.stop() == 0);
}

TEST_CASE("import kineto into a data dir: a bad file fails alone, the good ones stay imported") {
  std::string dir = cli::makeTempDir("argus-import");
  std::string bad = dir + "/broken.json";
  std::ofstream(bad) << R"({"traceEvents": [{"ph": "X", "cat": "kernel", )";
  RunResult r = runArgus("import kineto --job dlrm --data " + dir + "/data " + dlrm(2) + " " + bad + " " + dlrm(3));
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.output, bad + ": not valid JSON at byte"));
  CHECK(contains(r.output, "1 of 3 files failed (the others are imported)"));
  testing::StoredRows rows;
  Status s = testing::scanSteps(dir + "/data", "dlrm", &rows);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  CHECK(rows.size() == 2);
  CHECK(rows.count({2, 10}) == 1);
  CHECK(rows.count({3, 10}) == 1);
  cli::removeTree(dir);
}

TEST_CASE("import says when a file replaces steps an earlier file of the run imported for the same rank") {
  std::string dir = cli::makeTempDir("argus-import-dup");
  RunResult r = runArgus("import kineto --job dlrm --data " + dir + "/data --rank 5 " + dlrm(2) + " " + dlrm(3));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, dlrm(3) + ": 1 steps of rank 5 were already imported from " + dlrm(2) + " in this run: these records replace them"));
  testing::StoredRows rows;
  Status s = testing::scanSteps(dir + "/data", "dlrm", &rows);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  CHECK(rows.size() == 1);
  CHECK(rows.count({5, 10}) == 1);
  cli::removeTree(dir);
}

TEST_CASE("import kineto --stats json prints per-file and total figures") {
  std::string dir = cli::makeTempDir("argus-import-stats");
  RunResult r = runArgus("import kineto --job dlrm --data " + dir + "/data --stats json " + dlrm(4) + " " + dlrm(5), false);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  nlohmann::json stats = nlohmann::json::parse(r.output);
  REQUIRE(stats["files"].size() == 2);
  for (const char* key : {"steps", "kernels_per_step", "raw_bytes_per_step", "kernel_event_bytes_per_step", "wire_bytes_per_step",
                          "steady_wire_bytes_per_step", "ratio", "steady_ratio", "p50_max_rel_error", "p99_max_rel_error",
                          "total_max_abs_error_ns", "kernel_total_max_rel_error"}) {
    CHECK_MESSAGE(stats["total"].contains(key), key);
  }
  CHECK(stats["total"]["steps"] == 2);
  CHECK(stats["files"][0]["kernels_per_step"] == 251.0);
  CHECK(stats["total"]["total_max_abs_error_ns"] == 0);
  CHECK(stats["total"]["p99_max_rel_error"].get<double>() <= 0.0101);
  CHECK(stats["total"]["ratio"].get<double>() > 100);
  CHECK(stats["total"]["kernel_total_max_rel_error"].get<double>() <= 0.0101);
  // One step per file: nothing repeats, so the steady figure is the file's own.
  CHECK(stats["files"][0]["steady_wire_bytes_per_step"] == stats["files"][0]["wire_bytes_per_step"]);
  // Exact per-kernel totals on request: no error at all, a few more bytes.
  RunResult exact = runArgus("import kineto --job dlrm-exact --data " + dir + "/data --stats json --exact-kernel-totals " + dlrm(4), false);
  REQUIRE(exact.exit_code == 0);
  nlohmann::json exact_stats = nlohmann::json::parse(exact.output);
  CHECK(exact_stats["total"]["kernel_total_max_rel_error"] == 0.0);
  CHECK(exact_stats["total"]["total_max_abs_error_ns"] == 0);
  CHECK(exact_stats["files"][0]["wire_bytes_per_step"].get<double>() > stats["files"][0]["wire_bytes_per_step"].get<double>());
  RunResult usage = runArgus("import kineto --job dlrm " + dlrm(4));
  CHECK(usage.exit_code == 1);
  CHECK(contains(usage.output, "give exactly one of --server HOST:PORT and --data DIR"));
  cli::removeTree(dir);
}
