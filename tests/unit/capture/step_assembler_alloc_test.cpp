// In steady state the assembler allocates nothing: not per event, not per step (buffers,
// histograms and indexes are reused). This executable replaces operator new to count.
#include <doctest/doctest.h>

#include "tests/unit/alloc_counter.h"

#include "capture/step_assembler.h"
#include "event_stream.h"

using argus::testing::allocationCount;

using namespace argus::capture;
using namespace argus::capture::testing;

namespace {

// Feeds the stream; returns the allocations made while feeding its second half (the first
// half warms the buffers up).
long allocationsInSteadyState(StepAssembler& a, const EventStream& s) {
  size_t warm = s.events.size() / 2;
  long during = -1;
  for (size_t i = 0; i < s.events.size(); ++i) {
    if (i == warm) during = allocationCount();
    a.onEvent(s.events[i]);
  }
  return allocationCount() - during;
}

}  // namespace

TEST_CASE("steady state: zero allocations per event and per step") {
  EventStream s;
  const int kSteps = 60;
  int64_t t = 1'000'000;
  for (int step = 0; step < kSteps; ++step) {
    s.push("argus:step", t);
    s.push("forward", t + 10);
    for (int i = 0; i < 300; ++i) s.kernel("gemm_" + std::to_string(i % 30), t + 100 + i * 30, t + 120 + i * 30 + (i % 3), 7, t + 50 + i * 30, 1);
    s.pop(t + 10'000);
    s.range("autograd::engine::evaluate_function: MmBackward0", t + 10'000, t + 20'000);
    for (int i = 0; i < 100; ++i) s.kernel("ncclDevKernel_AllReduce", t + 10'000 + i * 90, t + 10'050 + i * 90, 8, t + 10'000 + i * 90, 1);
    s.memcpy(CopyKind::kDtoH, t + 21'000, t + 21'500, 4096);
    s.sample(5, t + 22'000);
    s.mark("tick", t + 23'000);
    t += 30'000;
    s.pop(t);
  }
  StepAssemblerOptions opt;
  opt.emit_lag_ns = 40'000;
  size_t records = 0;
  StepAssembler a(s.names, opt, [&](const StepOutput&) { ++records; });
  long allocated = allocationsInSteadyState(a, s);
  CHECK(records >= kSteps - 2);
  CHECK(allocated == 0);
}

TEST_CASE("steady state, CPU-only steps (phase columns from ranges): zero allocations") {
  EventStream s;
  const int kSteps = 60;
  int64_t t = 1'000'000;
  for (int step = 0; step < kSteps; ++step) {
    s.push("argus:step", t);
    s.push("forward", t + 10);
    s.pop(t + 10'000);
    s.push("backward", t + 10'000);
    s.push("nccl:AllReduce", t + 15'000);
    s.pop(t + 19'000);
    s.pop(t + 20'000);
    s.range("gloo:allreduce", t + 12'000, t + 13'000, 2);
    s.push("optimizer", t + 20'000);
    s.pop(t + 25'000);
    t += 30'000;
    s.pop(t);
  }
  StepAssemblerOptions opt;
  opt.emit_lag_ns = 40'000;
  size_t records = 0, cpu = 0;
  StepAssembler a(s.names, opt, [&](const StepOutput& out) {
    ++records;
    cpu += (out.record.flags & argus::model::kStepCpuPhases) != 0;
  });
  long allocated = allocationsInSteadyState(a, s);
  CHECK(records >= kSteps - 2);
  CHECK(cpu == records);
  CHECK(allocated == 0);
}
