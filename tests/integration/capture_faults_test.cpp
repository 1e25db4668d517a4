// The capture shim under argusd faults (docs/capture/shim.md, "Failure behaviour"): a
// 2-rank NVTX job (capture_workload) runs under `argus capture` with room for only 4 steps
// in memory per rank, while argusd is absent at start, then started, SIGKILLed mid-run and
// restarted on the same port and data directory. The job's exit code is its own, every step
// of every rank is stored in the end, the spool carried what memory could not hold, and
// memory never held more than the bound. Then: a spool left by a run that ended while argusd
// was away is sent by the next run of the job.
#include <doctest/doctest.h>

#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <regex>
#include <string>
#include <thread>

#include "cli/argusd_process.h"
#include "ingest_test_util.h"

using namespace argus;
using namespace std::chrono_literals;
using argus::testing::RunResult;
using argus::testing::runArgus;

#ifdef ARGUS_CAPTURE_WORKLOAD
namespace {

std::string workload(const std::string& args) { return std::string(ARGUS_CAPTURE_WORKLOAD) + " " + args; }

int spoolFiles(const std::string& dir) {
  int n = 0;
  DIR* d = ::opendir(dir.c_str());
  while (dirent* e = d != nullptr ? ::readdir(d) : nullptr) {
    n += std::string_view(e->d_name).ends_with(".spool");
  }
  if (d != nullptr) ::closedir(d);
  return n;
}

bool waitFor(const std::function<bool()>& what, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!what()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

// The shim's exit lines, one per rank: "argus: spool: S steps spooled ..., A taken over
// from an earlier run, R replayed, D dropped ..., L left ...; at most M steps (B bytes) ...".
struct SpoolLine {
  uint64_t spooled, adopted, replayed, dropped, left, peak_records;
};
std::vector<SpoolLine> spoolLines(const std::string& output) {
  static const std::regex re(
      R"(argus: spool: (\d+) steps spooled while argusd was unreachable, (\d+) taken over from an earlier run, (\d+) replayed, )"
      R"((\d+) dropped with the spool full or off, (\d+) left[^;]*; at most (\d+) steps \(\d+ bytes\) were held in memory)");
  std::vector<SpoolLine> out;
  for (auto it = std::sregex_iterator(output.begin(), output.end(), re); it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    out.push_back({std::stoull(m[1]), std::stoull(m[2]), std::stoull(m[3]), std::stoull(m[4]), std::stoull(m[5]), std::stoull(m[6])});
  }
  return out;
}

// The environment every rank of the job inherits (through argus capture).
void setShimEnv(const std::string& spool_dir, const char* exit_flush_ms) {
  ::setenv("ARGUS_SPOOL_DIR", spool_dir.c_str(), 1);
  ::setenv("ARGUS_SPOOL_MAX_MB", "1024", 1);  // on (CTest turns it off for the other tests)
  ::setenv("ARGUS_SEND_BUFFER_RECORDS", "4", 1);  // a few steps in memory: the spool carries the rest
  ::setenv("ARGUS_EXIT_FLUSH_MS", exit_flush_ms, 1);
}

}  // namespace

TEST_CASE("argusd absent at start, then SIGKILLed and restarted mid-run: the job is unaffected and every step is stored") {
  constexpr int kRanks = 2, kSteps = 250;
  std::string spool = cli::makeTempDir("argus-spool");
  setShimEnv(spool, "60000");
  uint16_t port = argus::testing::freeLoopbackPort();
  std::atomic<bool> done{false};
  RunResult r;
  std::thread job([&] {
    r = runArgus("capture --server 127.0.0.1:" + std::to_string(port) + " --job faults -- " +
                 workload("--ranks 2 --steps 250 --work 4 --pause-ms 30 --exit-code 3"));
    done = true;
  });
  // argusd absent: each rank's steps beyond the 4 in memory go to its spool file.
  bool spooling = waitFor([&] { return spoolFiles(spool) == kRanks || done; }, 120s);
  CHECK(spooling);
  CHECK_FALSE(done.load());
  cli::ArgusdProcess argusd;
  argusd.setIngestPort(port);
  Status s = argusd.start();
  REQUIRE_MESSAGE(s.isOk(), s.toString() << "\n" << argusd.stderrTail());
  // argusd up: the spools are replayed and removed once acknowledged.
  CHECK(waitFor([&] { return spoolFiles(spool) == 0 || done; }, 60s));
  std::this_thread::sleep_for(300ms);
  bool mid_run = !done.load();
  argusd.kill();
  // argusd gone again, mid-run: the spool files come back.
  CHECK(waitFor([&] { return spoolFiles(spool) > 0 || done; }, 60s));
  s = argusd.start();
  REQUIRE_MESSAGE(s.isOk(), s.toString() << "\n" << argusd.stderrTail());
  job.join();
  INFO(r.output);
  CHECK(mid_run);  // the kill happened while the job ran (else the run is too short for this machine)
  CHECK(r.exit_code == 3);  // the job's own exit code, unchanged

  auto lines = spoolLines(r.output);
  REQUIRE(lines.size() == kRanks);
  for (const SpoolLine& l : lines) {
    MESSAGE("a rank: " << l.spooled << " steps spooled, " << l.replayed << " replayed, at most " << l.peak_records << " in memory");
    CHECK(l.spooled > 0);  // the spool carried what memory could not hold
    CHECK(l.replayed == l.spooled);
    CHECK(l.dropped == 0);
    CHECK(l.left == 0);
    CHECK(l.peak_records <= 4);  // memory never held more than the bound
  }
  CHECK(spoolFiles(spool) == 0);
  CHECK(argusd.stop() == 0);

  testing::StoredRows rows;
  s = testing::scanSteps(argusd.dataDir(), "faults", &rows);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  CHECK(rows.size() == kRanks * kSteps);
  for (uint32_t rank = 0; rank < kRanks; ++rank) {
    for (uint64_t step = 0; step < kSteps; ++step) {
      auto it = rows.find({rank, step});
      REQUIRE_MESSAGE(it != rows.end(), "rank " << rank << " step " << step << " missing");
      CHECK(it->second.size() == 1);
    }
  }
  cli::removeTree(spool);
}

TEST_CASE("a run that ends while argusd is away leaves its spool; the next run of the job sends it") {
  constexpr int kRanks = 2, kFirst = 60;
  std::string spool = cli::makeTempDir("argus-spool");
  setShimEnv(spool, "300");
  uint16_t port = argus::testing::freeLoopbackPort();
  RunResult first = runArgus("capture --server 127.0.0.1:" + std::to_string(port) + " --job leftover -- " +
                             workload("--ranks 2 --steps 60 --work 2 --exit-code 4"));
  INFO(first.output);
  CHECK(first.exit_code == 4);
  auto lines = spoolLines(first.output);
  REQUIRE(lines.size() == kRanks);
  for (const SpoolLine& l : lines) CHECK(l.left == kFirst);  // every step waits in the spool
  CHECK(spoolFiles(spool) == kRanks);

  cli::ArgusdProcess argusd;
  argusd.setIngestPort(port);
  Status s = argusd.start();
  REQUIRE_MESSAGE(s.isOk(), s.toString() << "\n" << argusd.stderrTail());
  setShimEnv(spool, "30000");
  RunResult second = runArgus("capture --server 127.0.0.1:" + std::to_string(port) + " --job leftover -- " +
                              workload("--ranks 2 --steps 10 --work 2"));
  INFO(second.output);
  CHECK(second.exit_code == 0);
  lines = spoolLines(second.output);
  REQUIRE(lines.size() == kRanks);
  for (const SpoolLine& l : lines) {
    CHECK(l.adopted == kFirst);
    CHECK(l.left == 0);
  }
  CHECK(spoolFiles(spool) == 0);
  CHECK(argusd.stop() == 0);

  // The second run made steps 0..9 only (--steps 10): steps 10..59 can only have come from
  // the first run's spool.
  testing::StoredRows rows;
  s = testing::scanSteps(argusd.dataDir(), "leftover", &rows);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  CHECK(rows.size() == kRanks * kFirst);
  for (uint32_t rank = 0; rank < kRanks; ++rank) {
    for (uint64_t step = 0; step < kFirst; ++step) CHECK_MESSAGE(rows.count({rank, step}) == 1, "rank " << rank << " step " << step);
  }
  cli::removeTree(spool);
}
#else
TEST_CASE("capture faults need the toolkit's nvtx3 headers") { MESSAGE("no NVTX headers: capture_faults_test skipped"); }
#endif
