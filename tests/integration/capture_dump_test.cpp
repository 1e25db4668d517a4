// Flight-recorder dumps on request, end to end (docs/capture/shim.md, "Flight recorder"):
// a 2-rank NVTX job (capture_workload) runs under `argus capture` into a real argusd; once
// steps are stored, POST /api/v1/jobs/{job}/flight-recorder asks every rank for a step range;
// each rank's collector writes Chrome-trace JSON into ARGUS_DUMP_DIR, which must hold exactly
// the requested steps' ranges within their stored time span. The job's exit code is unchanged.
#include <doctest/doctest.h>

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "cli/argusd_process.h"
#include "cli/http_client.h"
#include "ingest_test_util.h"

using namespace argus;
using namespace std::chrono_literals;
using argus::testing::RunResult;
using argus::testing::runArgus;

#ifdef ARGUS_CAPTURE_WORKLOAD
namespace {

bool waitFor(const std::function<bool()>& what, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!what()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

// The dump file of `rank` for [from, to], if one is complete in `dir` (the pid is the rank's).
std::string findDump(const std::string& dir, const std::string& job, int rank, uint64_t from, uint64_t to) {
  std::string prefix = "argus-" + job + "-rank" + std::to_string(rank) + "-steps" + std::to_string(from) + "-" + std::to_string(to) + "-";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.starts_with(prefix) && name.ends_with(".json")) return entry.path().string();
  }
  return "";
}

struct StoredStep {
  int64_t start_ns, end_ns;
};

}  // namespace

TEST_CASE("argus capture: POST flight-recorder makes every rank write the requested steps as Perfetto JSON next to the job") {
  cli::ArgusdProcess argusd;
  argusd.setHttp(true);
  Status s = argusd.start();
  REQUIRE_MESSAGE(s.isOk(), s.toString() << "\n" << argusd.stderrTail());
  const uint16_t http = argusd.httpPort();
  std::string dumps = cli::makeTempDir("argus-dumps");
  constexpr int kRanks = 2;
  const std::string job = "dumpjob";

  // The shim reads these in each rank (inherited through argus capture and the launcher;
  // left set: the thread below starts the job at a moment of its choosing).
  ::setenv("ARGUS_DUMP_DIR", dumps.c_str(), 1);
  ::setenv("ARGUS_FLIGHT_RECORDER_STEPS", "64", 1);  // room for the time between "stored" and the dump
  RunResult r;
  std::atomic<bool> done{false};
  std::thread run([&] {
    r = runArgus("capture --server 127.0.0.1:" + std::to_string(argusd.ingestPort()) + " --job " + job + " -- " +
                 std::string(ARGUS_CAPTURE_WORKLOAD) + " --ranks 2 --steps 400 --work 4 --pause-ms 40 --exit-code 3");
    done = true;
  });

  auto post = [&](const std::string& query) {
    auto reply = cli::httpRequest("127.0.0.1", http, "POST", "/api/v1/jobs/" + job + "/flight-recorder?" + query);
    REQUIRE_MESSAGE(reply.isOk(), reply.status().toString());
    return *reply;
  };
  // Stored steps of every rank: step -> (start, end).
  std::map<int, std::map<uint64_t, StoredStep>> stored;
  auto scan = [&] {
    auto reply = cli::httpRequest("127.0.0.1", http, "GET", "/api/v1/scan?job=" + job + "&table=steps&columns=rank,step,start_ns,end_ns");
    if (!reply.isOk() || reply->status != 200) return;
    nlohmann::json body = nlohmann::json::parse(reply->body);
    stored.clear();
    for (const auto& row : body["rows"]) {
      stored[row[0].get<int>()][row[1].get<uint64_t>()] = {row[2].get<int64_t>(), row[3].get<int64_t>()};
    }
  };
  // Both ranks have stored past step 80 (so steps 0-1 have left the 64-step ring).
  bool ready = waitFor(
      [&] {
        scan();
        if (done) return true;
        for (int rank = 0; rank < kRanks; ++rank) {
          if (stored[rank].empty() || stored[rank].rbegin()->first < 80) return false;
        }
        return true;
      },
      120s);
  REQUIRE(ready);
  REQUIRE_FALSE(done.load());
  uint64_t last = std::min(stored[0].rbegin()->first, stored[1].rbegin()->first);
  const uint64_t from = last - 4, to = last - 2;

  nlohmann::json accepted = nlohmann::json::parse(post("from_step=" + std::to_string(from) + "&to_step=" + std::to_string(to)).body);
  CHECK(accepted == nlohmann::json{{"sessions", kRanks}});
  // Rank 1 only, steps long gone: no file, one line in the job's output. Through the CLI.
  const std::string server = "--server 127.0.0.1:" + std::to_string(http);
  RunResult gone = runArgus("flight-recorder " + server + " --job " + job + " --from-step 0 --to-step 1 --ranks 1");
  CHECK_MESSAGE(gone.exit_code == 0, gone.output);
  CHECK(gone.output.find("asked 1 rank of job dumpjob for steps 0-1") != std::string::npos);
  RunResult nojob = runArgus("flight-recorder " + server + " --job nosuchjob --from-step 0 --to-step 1");
  CHECK(nojob.exit_code == 1);
  CHECK_MESSAGE(nojob.output.find("unknown job 'nosuchjob' (HTTP 404)") != std::string::npos, nojob.output);
  CHECK(runArgus("flight-recorder " + server + " --job " + job + " --from-step 3 --to-step 2").exit_code == 2);
  // Partly ahead of the ring: what is there is written.
  auto partial = post("from_step=" + std::to_string(to) + "&to_step=" + std::to_string(to + 100000) + "&ranks=0");
  CHECK(partial.status == 202);

  // Bad requests: clear errors, nothing asked.
  CHECK(post("from_step=5").status == 400);
  CHECK(post("from_step=5&to_step=4").status == 400);
  CHECK(post("from_step=x&to_step=4").status == 400);
  CHECK(post("from_step=1&to_step=4&ranks=0,zero").status == 400);
  CHECK(post("from_step=1&to_step=4&ranks=7").status == 404);  // no such rank connected
  auto unknown = cli::httpRequest("127.0.0.1", http, "POST", "/api/v1/jobs/nosuchjob/flight-recorder?from_step=1&to_step=2");
  REQUIRE(unknown.isOk());
  CHECK(unknown->status == 404);
  CHECK(unknown->body.find("unknown job 'nosuchjob'") != std::string::npos);
  auto get = cli::httpRequest("127.0.0.1", http, "GET", "/api/v1/jobs/" + job + "/flight-recorder?from_step=1&to_step=2");
  REQUIRE(get.isOk());
  CHECK(get->status == 405);

  std::map<int, std::string> files;
  bool written = waitFor(
      [&] {
        for (int rank = 0; rank < kRanks; ++rank) files[rank] = findDump(dumps, job, rank, from, to);
        return !files[0].empty() && !files[1].empty() && !findDump(dumps, job, 0, to, to + 100000).empty();
      },
      30s);
  run.join();
  INFO(r.output);
  CHECK_MESSAGE(written, "dump files not written in 30 s");
  CHECK(r.exit_code == 3);  // the job's own exit code, unchanged
  scan();
  for (int rank = 0; rank < kRanks && written; ++rank) {
    CAPTURE(rank);
    std::ifstream in(files[rank]);
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::json trace = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    REQUIRE_MESSAGE(!trace.is_discarded(), "not JSON: " << files[rank]);
    REQUIRE(trace.contains("traceEvents"));
    CHECK(trace["otherData"]["rank"] == rank);
    // Times are relative to the first requested step's start, as argusd stored it.
    REQUIRE(stored[rank].count(from) == 1);
    REQUIRE(stored[rank].count(to) == 1);
    const int64_t base = trace["otherData"]["base_time_ns"].get<int64_t>();
    CHECK(base == stored[rank][from].start_ns);
    const double span_us = static_cast<double>(stored[rank][to].end_ns - base) / 1000.0;
    std::multiset<std::string> names;
    for (const auto& e : trace["traceEvents"]) {
      if (e["ph"] != "X") continue;
      std::string name = e["name"].get<std::string>();
      names.insert(name);
      const double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
      CAPTURE(name);
      if (!e.contains("cat")) CHECK(e["pid"] == rank);  // CPU ranges on the rank's row
      CHECK(ts >= 0.0);
      CHECK(ts + dur <= span_us + 0.001);
    }
    // Exactly the requested steps, each with its ranges.
    for (uint64_t step = from - 1; step <= to + 1; ++step) {
      CHECK(names.count("ProfilerStep#" + std::to_string(step)) == (step >= from && step <= to ? 1u : 0u));
    }
    for (const char* range : {"forward", "backward", "optimizer"}) CHECK(names.count(range) == to - from + 1);
  }
  // One line per dump in the job's output; the steps gone from the ring said so.
  CHECK(r.output.find("flight recorder: wrote " + files[0]) != std::string::npos);
  CHECK(r.output.find("flight recorder: wrote " + files[1]) != std::string::npos);
  CHECK(r.output.find("flight recorder: steps 0-1: not written, none of them is in the ring") != std::string::npos);
  CHECK(r.output.find("of the requested " + std::to_string(to) + "-" + std::to_string(to + 100000) + " the ring holds only") !=
        std::string::npos);
  for (const auto& entry : std::filesystem::directory_iterator(dumps)) {
    CHECK_MESSAGE(!entry.path().string().ends_with(".tmp"), entry.path());  // no temporary left behind
  }

  // The job is over: no live session to ask.
  cli::HttpReply after;
  CHECK(waitFor([&] { return (after = post("from_step=1&to_step=2")).status == 404; }, 10s));
  CHECK(after.body.find("job 'dumpjob' has no live capture session") != std::string::npos);
  CHECK(argusd.stop() == 0);
  cli::removeTree(dumps);
}
#else
TEST_CASE("flight-recorder dumps need the toolkit's nvtx3 headers") { MESSAGE("no NVTX headers: capture_dump_test skipped"); }
#endif
