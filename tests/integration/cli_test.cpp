// The argus command line as a user runs it: the demo end to end, `argus verify` and
// `argus dump` on a data directory, and `argus dump` on wire frames, good and truncated.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "model/step_codec.h"
#include "cli/argusd_process.h"
#include "simulate/synthetic_steps.h"
#include "tests/integration/ingest_test_util.h"
#include "wire/messages.h"

using namespace argus;
using argus::testing::RunResult;
using argus::testing::runArgus;

namespace {

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

}  // namespace

TEST_CASE("argus demo streams a cluster into argusd and finds the slow rank with SQL over HTTP") {
  std::string dir = cli::makeTempDir("argus-cli-demo");
  RunResult demo = runArgus("demo --ranks 8 --steps 12 --signatures 24 --keep " + dir);
  INFO(demo.output);
  CHECK(demo.exit_code == 0);
  CHECK(contains(demo.output, "96 step records acknowledged durable"));
  // The slow rank (5, slowed from the middle of the run) heads the table.
  size_t table = demo.output.find("Slowest ranks");
  REQUIRE(table != std::string::npos);
  size_t first_row = demo.output.find("\n", demo.output.find("-----", table)) + 1;
  CHECK(demo.output.substr(first_row, 8).find('5') != std::string::npos);
  CHECK(contains(demo.output, "GROUP BY rank ORDER BY iter DESC"));  // each query printed above its answer
  // The step-time chart: the slowest rank's line reaches the top block once rank 5 slows
  // down (from step 6 of 12), starting at the bottom; the median's stays at the bottom.
  size_t chart = demo.output.find("  slowest rank  ");
  REQUIRE(chart != std::string::npos);
  std::string slowest_line = demo.output.substr(chart, demo.output.find('\n', chart) - chart);
  CHECK(slowest_line.find("\u2581") < slowest_line.find("\u2588"));
  size_t median = demo.output.find("  median rank   ");
  REQUIRE(median != std::string::npos);
  CHECK_FALSE(contains(demo.output.substr(median, demo.output.find('\n', median) - median), "\u2588"));
  CHECK(contains(demo.output, "Heaviest kernels of rank 5"));
  // Named from the kernel dictionary: the first kernel row has a name, not '?'.
  size_t kernels = demo.output.find("-----", demo.output.find("Heaviest kernels"));
  REQUIRE(kernels != std::string::npos);
  size_t kernel_row = demo.output.find("\n", kernels) + 1;
  CHECK(demo.output.substr(kernel_row, 4) != "  ? ");
  CHECK(contains(demo.output.substr(kernel_row), "ms"));
  CHECK(contains(demo.output, "argusd stopped (exit 0)"));
  CHECK(contains(demo.output, "argus shell --data " + dir + "/data"));

  SUBCASE("dump store decodes what the demo left") {
    RunResult dump = runArgus("dump store --data " + dir + "/data");
    INFO(dump.output.substr(0, 2000));
    CHECK(dump.exit_code == 0);
    CHECK(contains(dump.output, "meta format_version 2"));
    CHECK(contains(dump.output, "chunk job=1 table=steps column=iter_ns"));
    CHECK_FALSE(contains(dump.output, "CORRUPT"));
    RunResult chunks = runArgus("dump store --data " + dir + "/data --cf chunk --limit 3");
    CHECK(chunks.exit_code == 0);
    CHECK_FALSE(contains(chunks.output, "meta "));
  }
  SUBCASE("jobs lists, sets retention and drops") {
    std::string data = "--data " + dir + "/data";
    RunResult list = runArgus("jobs " + data);
    CHECK(list.exit_code == 0);
    CHECK(contains(list.output, "demo"));
    CHECK(contains(list.output, "forever"));
    RunResult keep = runArgus("jobs " + data + " --retention demo=30d");
    CHECK(keep.exit_code == 0);
    CHECK(contains(keep.output, "30.0 d"));
    RunResult bad = runArgus("jobs " + data + " --retention demo=soon");
    CHECK(bad.exit_code == 1);
    CHECK(contains(bad.output, "bad duration 'soon'"));
    RunResult unknown = runArgus("jobs " + data + " --drop nosuchjob");
    CHECK(unknown.exit_code == 1);
    CHECK(contains(unknown.output, "no job 'nosuchjob'"));
    RunResult drop = runArgus("jobs " + data + " --drop demo");
    CHECK(drop.exit_code == 0);
    CHECK(contains(drop.output, "job demo dropped"));
    RunResult after = runArgus("dump store " + data + " --cf chunk");
    CHECK(after.exit_code == 0);
    CHECK_FALSE(contains(after.output, "chunk job=1"));
  }
  SUBCASE("verify reads the demo's store clean, and names the damage of a flipped SST byte") {
    const std::string data = dir + "/data";
    RunResult clean = runArgus("verify --data " + data);
    INFO(clean.output);
    CHECK(clean.exit_code == 0);
    CHECK(contains(clean.output, "1 jobs"));
    CHECK(contains(clean.output, "no problems"));
    // The largest SST holds chunk values: a flipped byte there fails RocksDB's block checksum.
    std::string largest;
    uintmax_t largest_bytes = 0;
    for (const auto& e : std::filesystem::directory_iterator(data)) {
      if (e.path().extension() == ".sst" && e.file_size() > largest_bytes) largest = e.path(), largest_bytes = e.file_size();
    }
    REQUIRE(largest_bytes > 4096);
    {
      std::fstream f(largest, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(largest_bytes / 3));
      f.put('\x5a').put('\xa5').put('\x5a');
    }
    RunResult damaged = runArgus("verify --data " + data);
    INFO(damaged.output);
    CHECK(damaged.exit_code == 1);
    CHECK(contains(damaged.output, "argus verify"));
    CHECK(contains(damaged.output, "Corruption"));
  }
  SUBCASE("dump store on a directory that is no store fails cleanly") {
    RunResult bad = runArgus("dump store --data " + dir + "/nothing-here");
    CHECK(bad.exit_code == 1);
    CHECK(contains(bad.output, "cannot open"));
  }
  cli::removeTree(dir);
}

TEST_CASE("argus dump wire decodes a session's frames and stops cleanly at a truncated one") {
  simulate::SyntheticSteps gen(7, 8);
  wire::Hello hello;
  hello.job = "dump-job";
  hello.topology.rank = 7;
  std::string frames = wire::encodeHello(hello);
  wire::Dictionary dict;
  dict.kernels = gen.dictionary().kernels;
  frames += wire::encodeDictionary(dict);
  model::StepEncoder encoder;
  std::vector<std::string> records(3);
  for (std::string& r : records) encoder.encode(gen.next(), &r);
  frames += wire::encodeStepBatch(1, records);
  frames += wire::encodeGoodbye();

  std::string dir = cli::makeTempDir("argus-cli-wire");
  std::string path = dir + "/frames.bin";
  std::ofstream(path, std::ios::binary) << frames;
  RunResult dump = runArgus("dump wire " + path);
  INFO(dump.output);
  CHECK(dump.exit_code == 0);
  CHECK(contains(dump.output, "client Hello protocol=2 job=dump-job"));
  CHECK(contains(dump.output, "kernels=8"));
  CHECK(contains(dump.output, "seq=3"));
  CHECK(contains(dump.output, "step rank=7 step=2"));
  CHECK(contains(dump.output, "client Goodbye"));

  std::ofstream(path, std::ios::binary) << frames.substr(0, frames.size() - 30);
  RunResult truncated = runArgus("dump wire " + path);
  CHECK(truncated.exit_code == 1);
  CHECK(contains(truncated.output, "truncated"));
  cli::removeTree(dir);
}

TEST_CASE("argus dump stays out of the top-level help but its own help lists store and wire") {
  RunResult top = runArgus("--help");
  CHECK(top.exit_code == 0);
  CHECK_FALSE(contains(top.output, "Decode stored objects"));
  RunResult help = runArgus("dump --help");
  INFO(help.output);
  CHECK(help.exit_code == 0);
  CHECK(contains(help.output, "Decode a data directory's meta entries"));
  CHECK(contains(help.output, "Decode a file of wire frames"));
}
