// The NCCL source end to end on the capture side: operations driven through the plugin's
// function table, drained to TraceEvents and folded by the StepAssembler into each step's
// CollectiveStats (op, communicator, count, bytes, total and wait).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "capture/name_table.h"
#include "capture/nccl/nccl_drain.h"
#include "capture/step_assembler.h"
#include "tests/unit/capture_nccl/nccl_harness.h"

namespace argus::capture::nccl {
namespace {

struct Run {
  NameTable names;
  std::vector<TraceEvent> events;  // the steps' markers and the operations
  std::vector<std::vector<TraceEvent>> ops_by_step;
};

// `steps` steps, each a ProfilerStep#N range around `per_step` all-reduces on one
// communicator, with proxy events for 1 in `period` operations.
void record(Run& run, uint32_t period, int steps, int per_step) {
  DrainOptions o;
  o.sample_period = period;
  o.max_steps_per_s = UINT64_MAX / 4;
  Drain drain(Plugin::instance(), run.names, o);
  drain.drain();
  testing::Harness<5> h;
  REQUIRE(h.init(0x5eed) == abi::kSuccess);
  testing::Operation op;
  op.channels = 1;
  op.steps = 1;
  op.kernel_ns = 20'000;
  op.send_step = {0, 60'000, 30'000, 1 << 20};
  op.recv_step = {0, 0, 60'000, 1 << 20};
  for (int s = 1; s <= steps; ++s) {
    int64_t begin = nvtx::EpochClock::nowNs();
    for (int i = 0; i < per_step; ++i) h.run(op);
    int64_t end = nvtx::EpochClock::nowNs();
    auto drained = drain.drain();
    run.ops_by_step.emplace_back(drained.begin(), drained.end());
    TraceEvent marker;
    marker.type = EventType::kRange;
    marker.name = run.names.intern("ProfilerStep#" + std::to_string(s));
    marker.start_ns = begin;
    marker.end_ns = end;
    marker.thread = 1;
    run.events.push_back(marker);
    run.events.insert(run.events.end(), drained.begin(), drained.end());
  }
  h.finalize();
  std::stable_sort(run.events.begin(), run.events.end(), [](const TraceEvent& a, const TraceEvent& b) { return a.start_ns < b.start_ns; });
}

std::vector<model::StepRecord> assemble(const Run& run) {
  std::vector<model::StepRecord> out;
  StepAssembler a(run.names, StepAssemblerOptions{}, [&](const StepOutput& s) { out.push_back(s.record); });
  for (const TraceEvent& e : run.events) a.onEvent(e);
  a.flush();
  return out;
}

TEST_CASE("every operation sampled: a step's collective entry carries the summed wait") {
  Run run;
  record(run, 1, 3, 6);
  auto records = assemble(run);
  REQUIRE(records.size() == 3);
  for (size_t s = 0; s < records.size(); ++s) {
    REQUIRE(records[s].collectives.size() == 1);
    const model::CollectiveStat& c = records[s].collectives[0];
    const auto& ops = run.ops_by_step[s];
    CHECK(c.op == model::CollectiveOp::kAllReduce);
    CHECK(c.communicator == 0x5eed);
    CHECK(c.count == ops.size());
    CHECK(c.bytes == (uint64_t{1} << 20) * 4 * ops.size());
    int64_t total = 0, wait = 0;
    for (const TraceEvent& e : ops) {
      REQUIRE(e.wait_ns >= 0);
      total += e.end_ns - e.start_ns;
      wait += e.wait_ns;
    }
    CHECK(c.total_ns == total);
    // The wait travels as a 32-bit share of each call's duration: within a ns per call.
    CHECK(std::llabs(c.wait_ns - wait) <= static_cast<int64_t>(ops.size()));
    CHECK(c.wait_ns > 0);
    CHECK(c.wait_ns < c.total_ns);
  }
}

TEST_CASE("sampled operations: the known calls' wait share stands for the entry's whole time") {
  Run run;
  record(run, 3, 2, 9);
  auto records = assemble(run);
  REQUIRE(records.size() == 2);
  for (size_t s = 0; s < records.size(); ++s) {
    REQUIRE(records[s].collectives.size() == 1);
    const model::CollectiveStat& c = records[s].collectives[0];
    int64_t total = 0, known_dur = 0, known_wait = 0;
    size_t known = 0;
    for (const TraceEvent& e : run.ops_by_step[s]) {
      total += e.end_ns - e.start_ns;
      if (e.wait_ns < 0) continue;
      ++known;
      known_dur += e.end_ns - e.start_ns;
      known_wait += e.wait_ns;
    }
    CHECK(c.count == run.ops_by_step[s].size());
    REQUIRE(known > 0);
    CHECK(known < run.ops_by_step[s].size());
    double expected = static_cast<double>(known_wait) * static_cast<double>(total) / static_cast<double>(known_dur);
    CHECK(std::fabs(static_cast<double>(c.wait_ns) - expected) <= static_cast<double>(known) * 2 + 1);
  }
}

TEST_CASE("with CUPTI's NCCL kernels too: an operation counts once, from the plugin; a kernel it does not cover counts alone") {
  Run run;
  record(run, 1, 1, 3);
  const auto& ops = run.ops_by_step[0];
  REQUIRE(ops.size() == 3);
  // CUPTI's record of each operation's kernel: on a stream and device of CUPTI's numbering,
  // inside the operation's GPU span.
  auto kernel = [&](int64_t start, int64_t end) {
    TraceEvent k;
    k.type = EventType::kKernel;
    k.name = run.names.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    k.start_ns = start;
    k.end_ns = end;
    k.device = 0;
    k.stream = 13;
    k.geometry = {2, 1, 1, 512, 1, 1};
    run.events.push_back(k);
  };
  for (const TraceEvent& e : ops) kernel(e.start_ns + 1, e.end_ns - 1);
  // One NCCL kernel with no plugin operation over it (an operation the plugin lost): between
  // the first two operations' spans, or right after the last one inside the step.
  int64_t gap_start = ops[0].end_ns + 1, gap_end = ops[1].start_ns - 1;
  REQUIRE(gap_end > gap_start);
  kernel(gap_start, gap_end);
  std::stable_sort(run.events.begin(), run.events.end(), [](const TraceEvent& a, const TraceEvent& b) { return a.start_ns < b.start_ns; });
  auto records = assemble(run);
  REQUIRE(records.size() == 1);
  const auto& c = records[0].collectives;
  REQUIRE(c.size() == 2);
  for (const model::CollectiveStat& x : c) {
    CHECK(x.op == model::CollectiveOp::kAllReduce);
    if (x.communicator == 0x5eed) CHECK(x.count == 3);  // from the plugin: the kernels under it not counted again
    else CHECK((x.communicator == 0 && x.count == 1 && x.total_ns == gap_end - gap_start));  // the uncovered kernel
  }
}

TEST_CASE("no proxy events at all: wait_ns stays unknown") {
  Run run;
  record(run, 0, 1, 4);
  auto records = assemble(run);
  REQUIRE(records.size() == 1);
  REQUIRE(records[0].collectives.size() == 1);
  CHECK(records[0].collectives[0].count == 4);
  CHECK(records[0].collectives[0].wait_ns == -1);
}

}  // namespace
}  // namespace argus::capture::nccl
