// Bad input to the generic Chrome-trace importer: a truncated, malformed or wrong-shaped
// file is a clear error naming the file and a byte position; hostile values inside a good
// file are skipped and counted, never fatal.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "import/chrome_reader.h"
#include "import/trace_replay.h"
#include "tests/unit/import/trace_files.h"

using namespace argus;
using argus::testing::gzipped;
using argus::testing::tempPath;
using argus::testing::writeFile;

namespace {

Result<import::ChromeTrace> read(const std::string& path) { return import::readChromeTrace(path, import::ChromeMapping::defaults()); }

std::string errorOf(const std::string& name, const std::string& bytes) {
  std::string path = writeFile(name, bytes);
  auto t = read(path);
  std::remove(path.c_str());
  REQUIRE_FALSE(t.isOk());
  std::string msg = t.status().message();
  CHECK(msg.find(path + ": ") == 0);  // every message starts with the file
  return msg;
}

const std::string kGood =
    R"({"traceEvents":[)"
    R"({"ph":"M","name":"process_name","pid":7,"args":{"name":"rank 2"}},)"
    R"({"ph":"X","name":"forward-compute","pid":7,"tid":1,"ts":1000,"dur":500,"args":{"step":3,"microbatch":0}},)"
    R"({"ph":"X","name":"forward-send","pid":7,"tid":2,"ts":1500,"dur":20,"args":{"step":3,"microbatch":0,"bytes":2048,"peer":3}}]})";

bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

}  // namespace

TEST_CASE("a small valid trace: rank from the process name, exact times, plain and gzipped alike") {
  std::string plain = writeFile("good.json", kGood);
  std::string gz = writeFile("good.json.gz", gzipped(kGood));
  for (const std::string& path : {plain, gz}) {
    auto t = read(path);
    REQUIRE_MESSAGE(t.isOk(), t.status().toString());
    REQUIRE(t->ranks.size() == 1);
    CHECK(t->ranks[0].rank == 2);
    CHECK(t->raw_bytes == kGood.size());
    CHECK(t->gzipped == (path == gz));
    CHECK(t->counts.ops == 2);
    CHECK(t->counts.collectives == 1);
    // step range, microbatch range, kernel, kernel + collective
    REQUIRE(t->ranks[0].events.size() == 5);
    CHECK(t->ranks[0].events[0].start_ns == 1'000'000);
    CHECK(t->ranks[0].events[0].end_ns == 1'520'000);
  }
  std::remove(plain.c_str());
  std::remove(gz.c_str());
}

TEST_CASE("truncated gzip, malformed or cut JSON: the file and the byte") {
  std::string bytes = gzipped(kGood);
  std::string msg = errorOf("truncated.json.gz", bytes.substr(0, bytes.size() / 2));
  CHECK(contains(msg, "truncated or corrupt gzip stream after"));
  CHECK(contains(msg, "compressed byte"));
  CHECK_FALSE(read(writeFile("trailer.json.gz", bytes.substr(0, bytes.size() - 4))).isOk());

  msg = errorOf("bad.json", R"({"traceEvents": [ {"ph": "X", oops } ]})");
  CHECK(contains(msg, "not valid JSON at byte 31"));
  msg = errorOf("cut.json", kGood.substr(0, 120));
  CHECK(contains(msg, "not valid JSON at byte 121"));
}

TEST_CASE("wrong-shaped files: no traceEvents, a scalar, binary, no complete events, no steps, all ignored") {
  CHECK(contains(errorOf("noevents.json", R"({"schemaVersion": 1, "traceEvents": {"ph": "X"}})"),
                 "not a Chrome trace: no traceEvents array in 48 bytes of JSON"));
  CHECK(contains(errorOf("scalar.json", "42"), "not a trace: the JSON document is a single value"));
  CHECK(contains(errorOf("binary.bin", std::string("\x7f" "ELF\x02\x01\x01\0\0\0", 10)), "not valid JSON at byte 1"));
  std::string msg = errorOf("be.json", R"({"traceEvents":[{"ph":"B","name":"a","ts":1,"args":{"step":1}},{"ph":"E","ts":2}]})");
  CHECK(contains(msg, "no complete (\"X\") events with ts and dur among 2 trace events (2 of other phases: B/E, instants, counters are not read)"));

  // The error points at the first op that lacks a step, by byte.
  std::string prefix = R"({"traceEvents":[{"ph":"M","name":"process_name","pid":0,"args":{"name":"rank 0"}}, )";
  std::string nostep = prefix + R"({"ph":"X","name":"forward-compute","ts":1,"dur":1,"args":{"global_step":4}}]})";
  msg = errorOf("nostep.json", nostep);
  CHECK(contains(msg, "no complete event carries a step (looked for args.step, args.iteration, args.iter); the first, 'forward-compute' at byte " +
                          std::to_string(prefix.size()) + ", has none (name the key with [args] step = KEY in a --map file)"));
  // ... and the mapping fixes it.
  import::ChromeMapping m = import::ChromeMapping::defaults();
  REQUIRE(m.apply("[args]\nstep = global_step\n", "inline").isOk());
  std::string path = writeFile("globalstep.json", nostep);
  auto t = import::readChromeTrace(path, m);
  REQUIRE_MESSAGE(t.isOk(), t.status().toString());
  CHECK(t->ranks.at(0).steps == 1);
  std::remove(path.c_str());

  msg = errorOf("ignored.json", R"({"traceEvents":[{"ph":"X","name":"forward-backward","ts":1,"dur":9,"args":{"step":1}}]})");
  CHECK(contains(msg, "the mapping ignores all 1 complete events: nothing to import"));

  msg = errorOf("norank.json", R"({"traceEvents":[{"ph":"X","name":"forward-compute","pid":"worker-a","tid":"main","ts":1,"dur":9,"args":{"step":1}}]})");
  CHECK(contains(msg, "cannot tell the rank of thread 'main' of process 'worker-a'"));
  CHECK(read(writeFile("missing.json", "")).status().message().find("not valid JSON at byte 1") != std::string::npos);
  CHECK(contains(read(tempPath("does-not-exist.json")).status().message(), "cannot open"));
}

TEST_CASE("hostile values are skipped and counted; string ids and args are read where they hold numbers") {
  std::string path = writeFile("hostile.json",
      R"({"traceEvents":[{"ph":"X","name":"forward-compute","ts":"soon","dur":1,"args":{"step":1}},)"
      R"({"ph":"X","name":"forward-compute","ts":1e300,"dur":1,"args":{"step":1}},)"
      R"({"ph":"X","name":"forward-compute","ts":1,"dur":-5,"args":{"step":1}},)"
      R"({"ph":"X","name":"forward-compute","ts":1,"args":{"step":1}},)"
      R"({"ph":"X","name":"forward-compute","pid":"rank 5","tid":"stream 3","ts":10,"dur":2,"args":{"step":"12","microbatch":{"x":[1]}}},)"
      R"({"ph":"X","name":"backward-compute","pid":"rank 5","tid":"stream 3","ts":20,"dur":2,"args":{"step":-1,"microbatch":1.5}},)"
      R"({"ph":"X","name":{"nested":[[[]]]},"ts":[],"dur":{}}, 7, "x", null, [1, {"ph":"X"}]]})");
  auto t = read(path);
  REQUIRE_MESSAGE(t.isOk(), t.status().toString());
  const import::ChromeCounts& c = t->counts;
  CHECK(c.skipped == 5);      // ts "soon", ts 1e300, dur -5, no dur, no ts/dur at all
  CHECK(c.complete == 2);
  CHECK(c.bad_args == 1);     // step -1 (and microbatch 1.5); a nested object is no value at all
  CHECK(c.without_step == 1);
  REQUIRE(t->ranks.size() == 1);
  CHECK(t->ranks[0].rank == 5);  // from the pid's text
  CHECK(t->ranks[0].steps == 1);
  bool saw_stream = false;
  for (const auto& e : t->ranks[0].events) saw_stream |= e.type == capture::EventType::kKernel && e.stream == 3;
  CHECK(saw_stream);
  std::remove(path.c_str());
}

TEST_CASE("a data fallback reaches the assembler: every unnamed op is data loading") {
  std::string path = writeFile("datafallback.json",
      R"({"traceEvents":[{"ph":"X","name":"forward-compute","ts":100,"dur":50,"args":{"step":1}},)"
      R"({"ph":"X","name":"read-shard","tid":1,"ts":110,"dur":30,"args":{"step":1}}]})");
  import::ChromeMapping m = import::ChromeMapping::defaults();
  REQUIRE(m.apply("* = data\n", "inline").isOk());
  auto t = import::readChromeTrace(path, m);
  REQUIRE_MESSAGE(t.isOk(), t.status().toString());
  CHECK(t->counts.data_ranges == 1);
  std::vector<model::StepRecord> records;
  import::replayTrace(t->names, t->ranks.at(0).events, import::chromeAssemblerOptions(0, m),
                      [&](const capture::StepOutput& s) { records.push_back(s.record); });
  REQUIRE(records.size() == 1);
  CHECK(records[0].phase(model::PhaseColumn::kDataWait) == 30'000);
  CHECK(records[0].phase(model::PhaseColumn::kForward) == 50'000);
  std::remove(path.c_str());
}
