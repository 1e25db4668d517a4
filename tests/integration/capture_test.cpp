// `argus capture` end to end: a 4-rank NVTX-annotated CPU job (capture_workload) runs under
// the shim; each rank's libargus_capture.so is loaded by NVTX injection and sends its steps
// to a real argusd on loopback. Also: argusd absent at start and started mid-run, exit codes
// and signals passed through.
#include <doctest/doctest.h>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "cli/argusd_process.h"
#include "cli/http_client.h"
#include "ingest_test_util.h"
#include "model/step_record.h"

using namespace argus;
using argus::testing::RunResult;
using argus::testing::runArgus;

#ifdef ARGUS_CAPTURE_WORKLOAD
namespace {

struct WorkloadStep {
  int64_t fwd_ns, bwd_ns, allreduce_ns, iter_ns;
};
// rank -> steps, from the workload's own timing files.
std::map<int, std::vector<WorkloadStep>> readWorkload(const std::string& dir, int ranks) {
  std::map<int, std::vector<WorkloadStep>> out;
  for (int r = 0; r < ranks; ++r) {
    std::ifstream in(dir + "/rank-" + std::to_string(r) + ".txt");
    std::string word;
    int step;
    WorkloadStep s;
    while (in >> word >> step >> s.fwd_ns >> s.bwd_ns >> s.allreduce_ns >> s.iter_ns) out[r].push_back(s);
  }
  return out;
}

std::string workload(const std::string& args) { return std::string(ARGUS_CAPTURE_WORKLOAD) + " " + args; }

}  // namespace

TEST_CASE("argus capture: 4 NVTX ranks with a real allreduce land every step in argusd") {
  cli::ArgusdProcess argusd;
  argusd.setHttp(true);
  Status s = argusd.start();
  REQUIRE_MESSAGE(s.isOk(), s.toString() << "\n" << argusd.stderrTail());
  std::string out = cli::makeTempDir("argus-capture");
  constexpr int kRanks = 4, kSteps = 30, kSlow = 2;
  RunResult r = runArgus("capture --server 127.0.0.1:" + std::to_string(argusd.ingestPort()) + " --job capjob -- " +
                         workload("--ranks 4 --steps 30 --work 20 --sleep-work --slow-rank 2 --slow-factor 3 --out " + out));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("argus:") == std::string::npos);  // nothing went wrong: the shim says nothing

  auto steps = readWorkload(out, kRanks);
  REQUIRE(steps.size() == kRanks);
  // The workload itself: the slow rank's forward/backward take 3x its peers' (sleeps: a GPU
  // job's CPU waits on its device, and 4 ranks sharing 2 busy cores made wall-time ratios
  // of real arithmetic a matter of scheduling, CI of eb0dca2); the peers wait for it in
  // the allreduce.
  int64_t slow_fwd = 0, peer_fwd = 0, slow_wait = 0, peer_wait = 0;
  for (int rank = 0; rank < kRanks; ++rank) {
    REQUIRE(steps[rank].size() == kSteps);
    for (const auto& st : steps[rank]) {
      (rank == kSlow ? slow_fwd : peer_fwd) += st.fwd_ns + st.bwd_ns;
      (rank == kSlow ? slow_wait : peer_wait) += st.allreduce_ns;
    }
  }
  // 3x the sleep is ~3x the time; 1.5x is the bar, as for the stored steps below, since a
  // loaded machine wakes a rank late now and then. Each peer waits for about the slow
  // rank's extra forward/backward; the slow rank hardly waits.
  peer_fwd /= kRanks - 1, peer_wait /= kRanks - 1;
  CHECK(2 * slow_fwd > 3 * peer_fwd);
  CHECK(peer_wait - slow_wait > (slow_fwd - peer_fwd) / 2);

  auto reply = cli::httpRequest(
      "127.0.0.1", argusd.httpPort(), "GET",
      "/api/v1/scan?job=capjob&table=steps&columns=rank,step,iter_ns,forward_ns,backward_ns,comm_total_ns,flags,compute_ns");
  REQUIRE(reply.isOk());
  REQUIRE(reply->status == 200);
  nlohmann::json body = nlohmann::json::parse(reply->body);
  INFO(reply->body.substr(0, 2000));
  REQUIRE(body["rows"].size() == kRanks * kSteps);
  std::map<std::pair<int, int>, nlohmann::json> rows;
  for (const auto& row : body["rows"]) rows[{row[0].get<int>(), row[1].get<int>()}] = row;
  std::map<int, std::vector<int64_t>> compute, comm;  // rank -> stored per-step values
  // A stored range and the workload's own clock reads around it agree within 200 us unless
  // the rank was descheduled between the NVTX call and its clock read (the shim's sender
  // and the machine's other work share its cores): a few rows may miss by a time slice,
  // none by more than 50 ms.
  int misses = 0;
  auto close = [&](int64_t stored, int64_t own) {
    int64_t diff = std::llabs(stored - own);
    CHECK(diff < 50'000'000);
    if (diff >= 200'000) ++misses;
  };
  for (int rank = 0; rank < kRanks; ++rank) {
    for (int step = 0; step < kSteps; ++step) {
      auto it = rows.find({rank, step});
      REQUIRE_MESSAGE(it != rows.end(), "rank " << rank << " step " << step << " missing");
      const nlohmann::json& row = it->second;
      const WorkloadStep& own = steps[rank][step];
      // iter_ns is the ProfilerStep range, which the workload's own clock brackets within
      // a few clock reads; so are the forward range and the allreduce range.
      close(row[2].get<int64_t>(), own.iter_ns);
      // No device: phase columns from the NVTX ranges, and the record says so.
      CHECK(row[6].get<uint32_t>() == model::kStepCpuPhases);
      close(row[3].get<int64_t>(), own.fwd_ns);
      close(row[5].get<int64_t>(), own.allreduce_ns);
      // compute = forward + backward + optimizer (sequential ranges, the collective outside them).
      CHECK(row[7].get<int64_t>() >= row[3].get<int64_t>() + row[4].get<int64_t>());
      compute[rank].push_back(row[7].get<int64_t>());
      comm[rank].push_back(row[5].get<int64_t>());
    }
  }
  CHECK(misses <= 3 * kRanks * kSteps / 50);  // at most 2% of the values compared
  // What the issue asks of the stored steps: the slow rank computes ~3x longer than each
  // peer, and each peer waits in the allreduce for it longer than it waits itself, by most
  // of the compute it waits for. Means over steps, as the workload's own check above: on a
  // loaded machine a rank is sometimes woken late mid-range, which the stored ranges
  // (rightly) show.
  auto mean = [](const std::vector<int64_t>& v) {
    int64_t sum = 0;
    for (int64_t x : v) sum += x;
    return sum / static_cast<int64_t>(v.size());
  };
  for (int rank = 0; rank < kRanks; ++rank) {
    MESSAGE("rank " << rank << ": mean compute_ns " << mean(compute[rank]) << ", comm_total_ns " << mean(comm[rank]));
  }
  for (int rank = 0; rank < kRanks; ++rank) {
    if (rank == kSlow) continue;
    CAPTURE(rank);
    CHECK(mean(compute[kSlow]) > 3 * mean(compute[rank]) / 2);
    CHECK(mean(comm[rank]) - mean(comm[kSlow]) > (mean(compute[kSlow]) - mean(compute[rank])) / 2);
  }
  CHECK(argusd.stop() == 0);
  cli::removeTree(out);
}

TEST_CASE("argus capture: argusd absent at start, started mid-run; the job is unaffected and its steps arrive") {
  uint16_t port = argus::testing::freeLoopbackPort();
  RunResult r;
  std::thread job([&] {
    r = runArgus("capture --server 127.0.0.1:" + std::to_string(port) + " --job late -- " +
                 workload("--ranks 4 --steps 120 --work 20 --exit-code 5"));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  cli::ArgusdProcess argusd;
  argusd.setIngestPort(port);
  Status s = argusd.start();
  job.join();
  REQUIRE_MESSAGE(s.isOk(), s.toString() << "\n" << argusd.stderrTail());
  INFO(r.output);
  CHECK(r.exit_code == 5);  // the job's own exit code, unchanged
  CHECK(argusd.stop() == 0);
  testing::StoredRows rows;
  s = testing::scanSteps(argusd.dataDir(), "late", &rows);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  // Nothing was lost: the sender buffered the steps made while argusd was away.
  CHECK(rows.size() == 4 * 120);
  for (uint32_t rank = 0; rank < 4; ++rank) CHECK(rows.count({rank, 119}) == 1);
}

TEST_CASE("ARGUS_VERBOSE=1: at exit, one line of counters per part of the shim, with what it handled") {
  cli::ArgusdProcess argusd;
  Status s = argusd.start();
  REQUIRE_MESSAGE(s.isOk(), s.toString() << "\n" << argusd.stderrTail());
  RunResult r = runArgus("capture --server 127.0.0.1:" + std::to_string(argusd.ingestPort()) + " --job verbose -- " +
                             workload("--ranks 1 --steps 10 --work 1"),
                         true, "ARGUS_VERBOSE=1");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  // The workload's step ranges arrive: 10 steps sent and assembled, nothing dropped or late.
  CHECK(r.output.find("argus: counters: 10 steps sent") != std::string::npos);
  CHECK(r.output.find("0 source drops, 0 records dropped") != std::string::npos);
  CHECK(r.output.find("argus: assembler: 0 kernels, 10 steps, 0 late, 0 invalid") != std::string::npos);
  CHECK(r.output.find("argus: nccl: 0 communicators") != std::string::npos);
  if (r.output.find("argus: cupti:") != std::string::npos) {  // a shim built with CUPTI
    // No driver here: CUPTI never started, and its lines say so by their zeros.
    CHECK(r.output.find("argus: cupti: 0 records") != std::string::npos);
    CHECK(r.output.find("argus: cupti clock: CUPTI's own") != std::string::npos);
  }
  CHECK(argusd.stop() == 0);
}

TEST_CASE("argus capture passes the command's exit code and signals through") {
  CHECK(runArgus("capture --server 127.0.0.1:1 -- " + workload("--ranks 2 --steps 2 --work 1 --exit-code 7")).exit_code == 7);
  CHECK(runArgus("capture -- sh -c 'kill -KILL $$'").exit_code == 128 + SIGKILL);
  CHECK(runArgus("capture -- /nonexistent/command").exit_code == 127);
  CHECK(runArgus("capture --shim /nonexistent/libargus_capture.so -- true").exit_code == 2);

  // SIGTERM to argus reaches the command; argus exits as the command did. The signal goes
  // once the command runs (argus forwards from before its fork on): a fixed 300 ms wait
  // once sent it before a sanitizer build's argus had started, and the signal killed it.
  const std::string dir = cli::makeTempDir("argus-capture-signal");
  const std::string ready = dir + "/ready";
  const char* bin = std::getenv("ARGUS_BIN");
  const std::string script = "touch " + ready + " && exec sleep 30";  // before the fork: the child must not allocate
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::execl(bin, bin, "capture", "--", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    ::_exit(126);
  }
  for (int i = 0; i < 6000 && !std::filesystem::exists(ready); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(std::filesystem::exists(ready));
  ::kill(pid, SIGTERM);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  cli::removeTree(dir);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + SIGTERM);
}
TEST_CASE("libargus_capture.so exports its entry points and nothing else (docs/capture/shim.md)") {
  // What the dynamic linker can bind in the shim: anything more could capture the training
  // job's own calls (a static library's symbols) or clash with its copies.
  FILE* pipe = ::popen(("nm -D --defined-only " + std::string(ARGUS_CAPTURE_SHIM) + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  REQUIRE(::pclose(pipe) == 0);
  INFO(out);
  std::set<std::string> exported;
  std::istringstream lines(out);
  std::string address, type, name;
  while (lines >> address >> type >> name) {
    if (type != "A") exported.insert(name);  // (A: a version node, not code or data)
  }
  std::set<std::string> expected = {"InitializeInjectionNvtx2", "InitializeInjection", "ncclProfiler_v5", "ncclProfiler_v4"};
  if (exported.count("cuptiActivityEnable") != 0) {  // a shim built with CUPTI: its four interposers
    expected.insert({"cuptiActivityRegisterCallbacks", "cuptiActivityEnable", "cuptiActivityDisable", "cuptiActivityRegisterTimestampCallback"});
  }
  CHECK(exported == expected);
}

TEST_CASE("argus capture puts the shim first in LD_PRELOAD; --no-preload leaves it alone") {
  const std::string show = " -- sh -c 'printf \"[%s]\" \"$LD_PRELOAD\"'";
  RunResult kept = runArgus("capture --server 127.0.0.1:1 --no-preload" + show, false, "LD_PRELOAD=");
  CHECK(kept.exit_code == 0);
  CHECK(kept.output == "[]");
  RunResult preloaded = runArgus("capture --server 127.0.0.1:1" + show, false, "LD_PRELOAD=");
  CHECK(preloaded.exit_code == 0);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  CHECK(preloaded.output == "[]");  // a sanitized shim must not load before the sanitizer runtime
#else
  CHECK(preloaded.output.starts_with("[/"));
  CHECK(preloaded.output.ends_with("/libargus_capture.so]"));
#endif
}
#else
TEST_CASE("argus capture needs the toolkit's nvtx3 headers") { MESSAGE("no NVTX headers: capture_test skipped"); }
#endif
