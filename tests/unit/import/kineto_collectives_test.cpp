// NCCL kernels with and without collective args in one trace: those with args become
// kCollective events (communicator, bytes); those without count as their own collectives in
// the assembler. Both reach the record, neither twice.
#include <doctest/doctest.h>
#include <xxhash.h>

#include <cstdio>
#include <string>
#include <vector>

#include "import/kineto_reader.h"
#include "import/trace_replay.h"
#include "tests/unit/import/trace_files.h"

using namespace argus;
using argus::testing::writeFile;

TEST_CASE("NCCL kernels with and without collective args both give collective stats") {
  const std::string trace_json =
      R"({"traceEvents":[)"
      R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":1000,"dur":1000},)"
      R"({"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":8,"ts":1100,"dur":100,)"
      R"("args":{"device":0,"stream":8,"Process Group Name":"0","In msg nelems":1024,"Out msg nelems":1024,"dtype":"Float"}},)"
      R"({"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":8,"ts":1300,"dur":50,)"
      R"("args":{"device":0,"stream":8}}]})";
  std::string path = writeFile("collectives.json", trace_json);
  auto trace = import::readKinetoTrace(path);
  REQUIRE_MESSAGE(trace.isOk(), trace.status().toString());
  CHECK(trace->counts.nccl_kernels == 2);
  CHECK(trace->counts.collectives == 1);  // only the kernel with args has a twin

  std::vector<model::StepRecord> records;
  import::replayTrace(trace->names, trace->events, import::importAssemblerOptions(0),
                      [&](const capture::StepOutput& out) { records.push_back(out.record); });
  REQUIRE(records.size() == 1);
  const auto& c = records[0].collectives;
  REQUIRE(c.size() == 2);
  uint64_t group = XXH3_64bits("0", 1);
  int from_args = 0, from_kernel = 0;
  for (const auto& stat : c) {
    CHECK(stat.op == model::CollectiveOp::kAllReduce);
    CHECK(stat.count == 1);
    if (stat.communicator == group) {
      ++from_args;
      CHECK(stat.bytes == 4096);
      CHECK(stat.total_ns == 100'000);
    } else {
      ++from_kernel;
      CHECK(stat.communicator == 0);
      CHECK(stat.bytes == 0);
      CHECK(stat.total_ns == 50'000);
    }
  }
  CHECK(from_args == 1);
  CHECK(from_kernel == 1);
  std::remove(path.c_str());
}
