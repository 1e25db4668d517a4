// `argus capture` with the NCCL profiler plugin end to end: nccl_workload plays NCCL against
// libargus_capture.so loaded from NCCL_PROFILER_PLUGIN (set by argus capture), with NVTX step
// ranges; the collectives of every step land in a real argusd with op, communicator, count,
// bytes and the time waiting for the (late) peer.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/argusd_process.h"
#include "cli/http_client.h"
#include "ingest_test_util.h"
#include "model/step_record.h"

using namespace argus;
using argus::testing::RunResult;
using argus::testing::runArgus;

#ifdef ARGUS_NCCL_WORKLOAD
namespace {

void checkJob(cli::ArgusdProcess& argusd, const std::string& job, int steps, int ops) {
  auto reply = cli::httpRequest("127.0.0.1", argusd.httpPort(), "GET",
                                "/api/v1/scan?job=" + job + "&table=collectives&columns=rank,step,op,communicator,count,bytes,total_ns,wait_ns");
  REQUIRE(reply.isOk());
  REQUIRE(reply->status == 200);
  nlohmann::json body = nlohmann::json::parse(reply->body);
  INFO(reply->body.substr(0, 2000));
  REQUIRE(body["rows"].size() == static_cast<size_t>(steps));
  int64_t sum_total = 0, sum_wait = 0;
  for (const auto& row : body["rows"]) {
    CHECK(row[2].get<int>() == static_cast<int>(model::CollectiveOp::kAllReduce));
    CHECK(row[3].get<std::string>() == std::to_string(0xC0FFEE));  // id columns travel as decimal strings
    CHECK(row[4].get<int>() == ops);
    CHECK(row[5].get<uint64_t>() == static_cast<uint64_t>(ops) * (uint64_t{1} << 18) * 4);
    int64_t total = row[6].get<int64_t>(), wait = row[7].is_null() ? -1 : row[7].get<int64_t>();
    CHECK(total > 0);
    CHECK(wait >= 0);  // every operation sampled (ARGUS_NCCL_SAMPLE=1)
    CHECK(wait <= total);
    sum_total += total;
    sum_wait += wait;
  }
  // Most of the time went to the late peer (expected ~0.9). Over all steps: a step in which
  // the workload was descheduled mid-transfer on this shared machine has a lower share.
  CHECK(sum_wait > sum_total / 2);
}

}  // namespace

TEST_CASE("argus capture: NCCL profiler plugin v5 and v4 collectives land in argusd with their wait") {
  cli::ArgusdProcess argusd;
  argusd.setHttp(true);
  Status s = argusd.start();
  REQUIRE_MESSAGE(s.isOk(), s.toString() << "\n" << argusd.stderrTail());
  ::setenv("ARGUS_NCCL_SAMPLE", "1", 1);
  for (const char* version : {"", "--v4"}) {
    std::string job = *version ? "ncclv4" : "ncclv5";
    RunResult r = runArgus("capture --server 127.0.0.1:" + std::to_string(argusd.ingestPort()) + " --job " + job + " -- " +
                           ARGUS_NCCL_WORKLOAD + " --steps 8 --ops 3 --peer-wait-us 1000 " + version);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(r.output.find("argus:") == std::string::npos);
    checkJob(argusd, job, 8, 3);
  }
  ::unsetenv("ARGUS_NCCL_SAMPLE");
  CHECK(argusd.stop() == 0);
}

TEST_CASE("argus capture with the shim off: the plugin refuses init, as NCCL expects") {
  ::setenv("ARGUS_DISABLE", "1", 1);
  RunResult r = runArgus(std::string("capture --server 127.0.0.1:1 -- ") + ARGUS_NCCL_WORKLOAD + " --steps 1 --ops 1");
  ::unsetenv("ARGUS_DISABLE");
  INFO(r.output);
  CHECK(r.exit_code == 3);
  CHECK(r.output.find("refused init") != std::string::npos);
}
#else
TEST_CASE("the NCCL capture test needs the shim (toolkit nvtx3 headers)") { MESSAGE("no shim: capture_nccl_test skipped"); }
#endif
