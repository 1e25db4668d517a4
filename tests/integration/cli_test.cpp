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

TEST_CASE("argus demo streams a simulated cluster with five faults into argusd and the diagnosis finds and places each") {
  std::string dir = cli::makeTempDir("argus-cli-demo");
  RunResult demo = runArgus("demo --ranks 64 --steps 160 --keep " + dir);
  INFO(demo.output);
  CHECK(demo.exit_code == 0);
  CHECK(contains(demo.output, "10240 step records acknowledged durable"));
  CHECK(contains(demo.output, "a100-8rank-rank3.json.gz"));  // kernels from the real trace
  // The report: a step-time chart, the diagnosis query above its findings, each injected
  // fault against them.
  size_t chart = demo.output.find("  slowest rank  ");
  REQUIRE(chart != std::string::npos);
  CHECK(contains(demo.output.substr(chart, demo.output.find('\n', chart) - chart), "\u2588"));
  CHECK(contains(demo.output, "SELECT * FROM diagnose('demo')"));
  for (const char* kind : {"compute_straggler", "masked_straggler", "link_degradation", "pipeline_bubble", "jit_stall"}) {
    CAPTURE(kind);
    size_t row = demo.output.find("\n  " + std::string(kind), demo.output.find("Against the faults"));
    REQUIRE(row != std::string::npos);
    CHECK(contains(demo.output.substr(row, demo.output.find('\n', row + 1) - row), "yes, placed"));
  }
  CHECK_FALSE(contains(demo.output, "MISSED"));
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
