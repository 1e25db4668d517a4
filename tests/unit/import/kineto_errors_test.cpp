// Bad input: every malformed, truncated or non-Kineto file is a clear error naming the
// file and a byte position, never a crash.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "import/kineto_reader.h"
#include "tests/unit/import/trace_files.h"

using argus::import::readKinetoTrace;
using argus::testing::gzipped;
using argus::testing::tempPath;
using argus::testing::writeFile;

namespace {

const std::string kGood =
    R"({"distributedInfo":{"rank":3,"world_size":8},"traceEvents":[)"
    R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#7","pid":1,"tid":1,"ts":1000,"dur":500},)"
    R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1100,"dur":5,"args":{"correlation":42}},)"
    R"({"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":1200.5,"dur":10.25,"args":{"device":0,"stream":7,"correlation":42,"grid":[4,1,1],"block":[128,1,1]}}]})";

}  // namespace

TEST_CASE("a small valid trace maps rank, launches and exact times") {
  std::string path = writeFile("good.json", kGood);
  auto trace = readKinetoTrace(path);
  REQUIRE_MESSAGE(trace.isOk(), trace.status().toString());
  CHECK(trace->rank == 3u);
  CHECK(trace->world_size == 8);
  CHECK(trace->counts.kernels == 1);
  CHECK(trace->counts.step_markers == 1);
  CHECK(trace->counts.launches_matched == 1);
  REQUIRE(trace->events.size() == 2);
  const auto& k = trace->events[1];
  CHECK(k.type == argus::capture::EventType::kKernel);
  CHECK(k.start_ns == 1200500);
  CHECK(k.end_ns == 1210750);
  CHECK(k.launch_ns == 1100000);
  CHECK(k.geometry.grid_x == 4);
  CHECK(k.geometry.block_x == 128);
  CHECK(trace->raw_bytes == kGood.size());
  std::remove(path.c_str());
}

TEST_CASE("gzipped and plain inputs read the same") {
  std::string plain = writeFile("same.json", kGood);
  std::string gz = writeFile("same.json.gz", gzipped(kGood));
  auto a = readKinetoTrace(plain);
  auto b = readKinetoTrace(gz);
  REQUIRE(a.isOk());
  REQUIRE(b.isOk());
  CHECK(b->gzipped);
  CHECK_FALSE(a->gzipped);
  CHECK(a->raw_bytes == b->raw_bytes);
  CHECK(a->events.size() == b->events.size());
  std::remove(plain.c_str());
  std::remove(gz.c_str());
}

TEST_CASE("a truncated gzip names the file and the byte where it ended") {
  std::string big = kGood;
  big.insert(big.find("]}"), std::string(",") + std::string(R"({"ph":"X","cat":"cpu_op","name":"aten::mm","tid":1,"ts":1300,"dur":1})"));
  std::string bytes = gzipped(big);
  std::string path = writeFile("truncated.json.gz", bytes.substr(0, bytes.size() / 2));
  auto trace = readKinetoTrace(path);
  REQUIRE_FALSE(trace.isOk());
  std::string msg = trace.status().message();
  INFO(msg);
  CHECK(msg.find(path) != std::string::npos);
  CHECK(msg.find("truncated or corrupt gzip") != std::string::npos);
  CHECK(msg.find("compressed byte") != std::string::npos);
  // Only the gzip trailer missing: the JSON is whole, the file is still broken.
  std::string trailer_cut = writeFile("trailer.json.gz", gzipped(kGood).substr(0, gzipped(kGood).size() - 4));
  auto t2 = readKinetoTrace(trailer_cut);
  CHECK_FALSE(t2.isOk());
  std::remove(path.c_str());
  std::remove(trailer_cut.c_str());
}

TEST_CASE("malformed JSON names the file and the byte position") {
  std::string path = writeFile("bad.json", "{\"traceEvents\": [ {\"ph\": \"X\", oops } ]}");
  auto trace = readKinetoTrace(path);
  REQUIRE_FALSE(trace.isOk());
  std::string msg = trace.status().message();
  INFO(msg);
  CHECK(msg.find(path) != std::string::npos);
  CHECK(msg.find("not valid JSON at byte 31") != std::string::npos);

  std::string cut = writeFile("cut.json", kGood.substr(0, 150));
  auto t2 = readKinetoTrace(cut);
  REQUIRE_FALSE(t2.isOk());
  INFO(t2.status().message());
  CHECK(t2.status().message().find("at byte 151") != std::string::npos);
  std::remove(path.c_str());
  std::remove(cut.c_str());
}

TEST_CASE("not a trace: no traceEvents, a scalar document, binary, a missing file") {
  std::string no_events = writeFile("noevents.json", R"({"schemaVersion": 1, "deviceProperties": []})");
  auto t1 = readKinetoTrace(no_events);
  REQUIRE_FALSE(t1.isOk());
  CHECK(t1.status().message().find(no_events + ": not a Kineto / Chrome trace: no traceEvents array in 44 bytes") != std::string::npos);

  std::string scalar = writeFile("scalar.json", "42");
  auto t2 = readKinetoTrace(scalar);
  REQUIRE_FALSE(t2.isOk());
  CHECK(t2.status().message().find(scalar) != std::string::npos);

  std::string binary = writeFile("binary.bin", std::string("\x7f" "ELF\x02\x01\x01\0\0\0", 10));
  auto t3 = readKinetoTrace(binary);
  REQUIRE_FALSE(t3.isOk());
  CHECK(t3.status().message().find("not valid JSON at byte 1") != std::string::npos);

  auto t4 = readKinetoTrace(tempPath("does-not-exist.json"));
  REQUIRE_FALSE(t4.isOk());
  CHECK(t4.status().message().find("cannot open") != std::string::npos);
  std::remove(no_events.c_str());
  std::remove(scalar.c_str());
  std::remove(binary.c_str());
}

TEST_CASE("hostile values are skipped, not fatal") {
  std::string path = writeFile("hostile.json",
      R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":"soon","dur":1},)"
      R"({"ph":"X","cat":"kernel","name":"k","ts":1e300,"dur":1},)"
      R"({"ph":"X","cat":"kernel","name":"k","ts":1,"dur":-5},)"
      R"({"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2,"args":{"grid":[1,2,3,4,5],"block":"x","device":-1}},)"
      R"({"ph":"X","cat":"cpu_op","name":{"nested":[[[]]]},"ts":[],"dur":{}}, 7, "x", null]})");
  auto trace = readKinetoTrace(path);
  REQUIRE_MESSAGE(trace.isOk(), trace.status().toString());
  CHECK(trace->counts.kernels == 1);
  CHECK(trace->counts.skipped == 4);
  std::remove(path.c_str());
}
