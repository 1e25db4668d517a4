// `argus import chrome` as a user runs it, on generated Megatron-style pipeline traces:
// into a running argusd (read back through the HTTP scan against the generator's truth),
// into a data dir with a broken file among good ones, --stats json, --map, and the memory
// a 50 MB file needs (peak RSS of the argus process).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/argusd_process.h"
#include "cli/http_client.h"
#include "ingest_test_util.h"
#include "tests/unit/import/megatron_trace.h"

using namespace argus;
using argus::testing::RunResult;
using argus::testing::runArgus;

namespace {

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

// Writes a generated pipeline trace (gzipped when the name ends in .gz) and returns its truth.
testing::MegatronTrace writePipeline(const std::string& path, const testing::MegatronOptions& o) {
  testing::MegatronTrace t = testing::makeMegatronTrace(o);
  std::string plain = path.ends_with(".gz") ? path.substr(0, path.size() - 3) : path;
  {
    std::ofstream out(plain, std::ios::binary);
    testing::writeChromeTrace(o, t, out);
  }
  if (plain != path) REQUIRE(std::system(("gzip -f " + plain).c_str()) == 0);
  return t;
}

// Runs argus with `args` (no shell), output discarded; returns its exit code and peak RSS in KB.
std::pair<int, long> runMeasured(const std::vector<std::string>& args) {
  const char* bin = std::getenv("ARGUS_BIN");
  REQUIRE(bin != nullptr);
  std::vector<char*> argv{const_cast<char*>(bin)};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // In a sanitizer build, ASan's quarantine of freed memory (256 MB by default) would be
  // measured as the importer's: keep it small.
  const char* asan = std::getenv("ASAN_OPTIONS");
  std::string options = "ASAN_OPTIONS=" + std::string(asan ? asan : "") + (asan && *asan ? ":" : "") + "quarantine_size_mb=16";
  std::vector<char*> envp{options.data()};
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "ASAN_OPTIONS=", 13) != 0) envp.push_back(*e);
  }
  envp.push_back(nullptr);
  // posix_spawn, not fork: nothing may allocate between a fork and its exec (cli/argusd_process.cpp).
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  ::posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, bin, &actions, nullptr, argv.data(), envp.data());
  ::posix_spawn_file_actions_destroy(&actions);
  REQUIRE_MESSAGE(spawned == 0, "cannot run " << bin << ": " << std::strerror(spawned));
  int status = 0;
  struct rusage usage {};
  ::wait4(pid, &status, 0, &usage);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, usage.ru_maxrss};
}

}  // namespace

TEST_CASE("import chrome sends a 4-stage pipeline to argusd; the HTTP scan returns the truth") {
  std::string dir = cli::makeTempDir("argus-import-chrome");
  testing::MegatronOptions o;
  std::string file = dir + "/megatron.json.gz";
  testing::MegatronTrace t = writePipeline(file, o);
  auto want = testing::expectedRecords(t);

  cli::ArgusdProcess argusd;
  argusd.setHttp(true);
  Status s = argusd.start();
  REQUIRE_MESSAGE(s.isOk(), s.toString() << "\n" << argusd.stderrTail());
  RunResult r = runArgus("import chrome --job mega --server 127.0.0.1:" + std::to_string(argusd.ingestPort()) + " " + file);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, file + ": 4 ranks (0..3), 12 steps, "));
  CHECK(contains(r.output, "(0 outside steps)"));
  CHECK(contains(r.output, file + ": " + std::to_string(t.instants + 1) + " events of other phases (B/E, instants, counters, flows) were not read"));

  auto reply = cli::httpRequest("127.0.0.1", argusd.httpPort(), "GET",
                                "/api/v1/scan?job=mega&table=steps&columns=rank,step,iter_ns,forward_ns,backward_ns,optimizer_ns,comm_exposed_ns,"
                                "gpu_idle_ns,bubble_ns,data_wait_ns");
  REQUIRE(reply.isOk());
  REQUIRE(reply->status == 200);
  nlohmann::json body = nlohmann::json::parse(reply->body);
  REQUIRE(body["rows"].size() == want.size());
  for (const auto& row : body["rows"]) {
    CAPTURE(row.dump());
    const testing::Expected& x = want.at({row[0].get<uint32_t>(), row[1].get<uint64_t>()});
    using C = model::PhaseColumn;
    CHECK(row[2].get<int64_t>() == x.end - x.start);
    int col = 3;
    for (C c : {C::kForward, C::kBackward, C::kOptimizer, C::kCommExposed, C::kGpuIdle, C::kBubble, C::kDataWait}) {
      CHECK(row[col++].get<int64_t>() == x.phase[static_cast<int>(c)]);
    }
  }
  // Stage 1's point-to-point traffic: 8 sends and 8 recvs to each neighbour per step, with bytes.
  auto coll = cli::httpRequest("127.0.0.1", argusd.httpPort(), "GET",
                               "/api/v1/scan?job=mega&table=collectives&ranks=1&from_step=100&to_step=101&columns=op,peer_rank,count,bytes");
  REQUIRE(coll.isOk());
  nlohmann::json cbody = nlohmann::json::parse(coll->body);
  INFO(coll->body);
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> count, bytes;
  for (const auto& row : cbody["rows"]) {
    count[{row[0].get<uint64_t>(), row[1].get<uint64_t>()}] += row[2].get<uint64_t>();
    bytes[{row[0].get<uint64_t>(), row[1].get<uint64_t>()}] += row[3].get<uint64_t>();
  }
  auto op = [](model::CollectiveOp o) { return static_cast<uint64_t>(o); };
  constexpr uint64_t kNoPeer = model::CollectiveStat::kNoPeer;
  CHECK(count[{op(model::CollectiveOp::kSend), 2}] == 8);  // forward-send to stage 2
  CHECK(count[{op(model::CollectiveOp::kSend), 0}] == 8);  // backward-send to stage 0
  CHECK(count[{op(model::CollectiveOp::kRecv), 0}] == 8);
  CHECK(count[{op(model::CollectiveOp::kRecv), 2}] == 8);
  CHECK(bytes[{op(model::CollectiveOp::kSend), 2}] == 8 * (16ull << 20));
  CHECK(count[{op(model::CollectiveOp::kReduceScatter), kNoPeer}] == 1);
  CHECK(bytes[{op(model::CollectiveOp::kAllGather), kNoPeer}] == 256ull << 20);
  CHECK(argusd.stop() == 0);
  cli::removeTree(dir);
}

TEST_CASE("import chrome into a data dir: a bad file fails alone, the good ones stay imported") {
  std::string dir = cli::makeTempDir("argus-import-chrome-data");
  testing::MegatronOptions a, b;
  b.first_step = 200;
  b.naming = testing::MegatronOptions::Naming::kPidIsRank;
  writePipeline(dir + "/a.json", a);
  writePipeline(dir + "/b.json.gz", b);
  std::string bad = dir + "/broken.json";
  std::ofstream(bad) << R"({"traceEvents": [{"ph": "X", "name": "forward-compute", )";
  RunResult r = runArgus("import chrome --job mega --data " + dir + "/data " + dir + "/a.json " + bad + " " + dir + "/b.json.gz");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.output, bad + ": not valid JSON at byte"));
  CHECK(contains(r.output, "1 of 3 files failed (the others are imported)"));
  testing::StoredRows rows;
  Status s = testing::scanSteps(dir + "/data", "mega", &rows);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  CHECK(rows.size() == 24);
  for (uint32_t rank = 0; rank < 4; ++rank) {
    for (uint64_t step : {100, 101, 102, 200, 201, 202}) CHECK_MESSAGE(rows.count({rank, step}) == 1, "rank " << rank << " step " << step);
  }
  cli::removeTree(dir);
}

TEST_CASE("import chrome --stats json and --map") {
  std::string dir = cli::makeTempDir("argus-import-chrome-stats");
  testing::MegatronTrace t = writePipeline(dir + "/a.json", testing::MegatronOptions{});
  uint64_t work = 0;
  for (const auto& op : t.ops) work += op.role == testing::FixtureRole::kWork;
  RunResult r = runArgus("import chrome --job mega --data " + dir + "/data --stats json " + dir + "/a.json", false);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  nlohmann::json stats = nlohmann::json::parse(r.output);
  REQUIRE(stats["files"].size() == 1);
  for (const char* key : {"steps", "kernels_per_step", "raw_bytes_per_step", "kernel_event_bytes_per_step", "wire_bytes_per_step", "ratio",
                          "p50_max_rel_error", "p99_max_rel_error", "total_max_abs_error_ns", "count_mismatches"}) {
    CHECK_MESSAGE(stats["total"].contains(key), key);
  }
  CHECK(stats["total"]["steps"] == 12);
  CHECK(stats["total"]["kernels_per_step"].get<double>() == static_cast<double>(work) / 12);
  CHECK(stats["total"]["total_max_abs_error_ns"] == 0);
  CHECK(stats["total"]["count_mismatches"] == 0);
  CHECK(stats["total"]["p99_max_rel_error"].get<double>() <= 0.0101);
  CHECK(stats["total"]["ratio"].get<double>() > 20);  // 3 steps a rank: the first of each chain is a keyframe
  CHECK(stats["total"]["kernel_event_bytes_per_step"].get<double>() < stats["total"]["raw_bytes_per_step"].get<double>());

  // A mapping file that looks for the step elsewhere finds none, and says where it looked.
  std::ofstream(dir + "/elsewhere.map") << "[args]\nstep = global_step\n";
  r = runArgus("import chrome --job mega2 --data " + dir + "/data --map " + dir + "/elsewhere.map " + dir + "/a.json");
  CHECK(r.exit_code == 1);
  CHECK(contains(r.output, "no complete event carries a step (looked for args.global_step)"));
  std::ofstream(dir + "/broken.map") << "forward-compute = sideways\n";
  r = runArgus("import chrome --job mega2 --data " + dir + "/data --map " + dir + "/broken.map " + dir + "/a.json");
  CHECK(r.exit_code == 1);
  CHECK(contains(r.output, dir + "/broken.map:1: unknown class 'sideways'"));
  // A mapping that makes forward-compute "other": the forward phase empties, compute stays.
  std::ofstream(dir + "/other.map") << "forward-compute = other\n";
  r = runArgus("import chrome --job mega3 --data " + dir + "/data --map " + dir + "/other.map " + dir + "/a.json");
  CHECK(r.exit_code == 0);
  cli::removeTree(dir);
}

TEST_CASE("a 50 MB trace imports in bounded memory") {
  std::string dir = cli::makeTempDir("argus-import-chrome-big");
  testing::MegatronOptions o;
  o.stages = 16;
  o.steps = 96;
  o.microbatches = 32;
  std::string file = dir + "/big.json";
  writePipeline(file, o);
  uint64_t bytes = std::filesystem::file_size(file);
  CHECK(bytes > 50'000'000);
  auto t0 = std::chrono::steady_clock::now();
  auto [code, rss_kb] = runMeasured({"import", "chrome", "--job", "big", "--data", dir + "/data", file});
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(code == 0);
  MESSAGE("import chrome of " << bytes / 1e6 << " MB into a data dir: " << s << " s (" << bytes / 1e6 / s << " MB/s), peak RSS " << rss_kb / 1024
                              << " MB");
  CHECK(rss_kb < 512 * 1024);  // the JSON is streamed: memory is the kept ops, not gigabytes
  cli::removeTree(dir);
}
