// StepAssembler on steps without device activity: phase columns from the CPU ranges
// (docs/capture/step-assembler.md, "Steps without device activity"), worked out to the ns.
#include <doctest/doctest.h>

#include "capture/name_classifier.h"
#include "capture/step_assembler.h"
#include "event_stream.h"

using namespace argus::capture;
using namespace argus::capture::testing;
using argus::model::kStepCpuPhases;
using argus::model::PhaseColumn;
using argus::model::StepRecord;

namespace {

// ProfilerStep#3 [0, 10000). Thread 1 (push/pop, nested):
//   forward [100,3000) holding argus:forward [500,1000); backward [3000,7000) holding
//   nccl:AllReduce [5000,6500); optimizer [7000,8000); dataloader [8500,9000).
// Thread 2: c10d::allreduce_ [1000,2000) (hidden behind thread 1's forward).
// Thread 3: optimizer [9500,12000), past the window's end (clipped to [9500,10000)).
EventStream cpuStep() {
  EventStream s;
  s.range("ProfilerStep#3", 0, 10000);
  s.push("forward", 100);
  s.push("argus:forward", 500);
  s.pop(1000);
  s.range("c10d::allreduce_", 1000, 2000, 2);
  s.pop(3000);
  s.push("backward", 3000);
  s.push("nccl:AllReduce", 5000);
  s.pop(6500);
  s.pop(7000);
  s.push("optimizer", 7000);
  s.pop(8000);
  s.push("dataloader", 8500);
  s.pop(9000);
  s.range("optimizer", 9500, 12000, 3);
  return s;
}

void checkCpuColumns(const StepRecord& r) {
  CHECK(r.flags == kStepCpuPhases);
  CHECK(r.phase(PhaseColumn::kForward) == 2900);    // [100,3000), the nested range once
  CHECK(r.phase(PhaseColumn::kBackward) == 4000);   // [3000,7000), the collective inside included
  CHECK(r.phase(PhaseColumn::kOptimizer) == 1500);  // [7000,8000) + [9500,10000)
  // Phases minus each thread's own collectives: 2900 + (4000 - 1500) + 1500.
  CHECK(r.phase(PhaseColumn::kCompute) == 6900);
  CHECK(r.phase(PhaseColumn::kCommTotal) == 2500);    // [1000,2000) + [5000,6500)
  CHECK(r.phase(PhaseColumn::kCommExposed) == 1500);  // [1000,2000) overlaps thread 1's forward
  CHECK(r.phase(PhaseColumn::kDataWait) == 500);
  CHECK(r.phase(PhaseColumn::kGpuIdle) == 0);
  CHECK(r.phase(PhaseColumn::kLaunchGap) == 0);
  CHECK(r.phase(PhaseColumn::kBubble) == 0);
  CHECK(r.kernels.empty());
}

}  // namespace

TEST_CASE("communication ranges by name: collectives, not compute that merely mentions one") {
  NameRules rules = NameRules::defaults();
  NameClassifier classifier(rules);
  for (const char* name : {"nccl:AllReduce", "nccl:all_reduce", "c10d::allreduce_", "gloo:broadcast", "grads-reduce-scatter",
                           "params-all-gather", "forward-send-backward-recv", "backward-recv", "all_to_all", "SendRecv"}) {
    CAPTURE(name);
    CHECK(rules.isCommRange(name));
    CHECK(classifier.isCommRange(name));
  }
  for (const char* name : {"forward", "backward", "optimizer", "aten::broadcast_tensors", "aten::mm", "ProfilerStep#1", ""}) {
    CAPTURE(name);
    CHECK_FALSE(rules.isCommRange(name));
    CHECK_FALSE(classifier.isCommRange(name));
  }
  // A range can be both: Megatron's pipeline exchange stays a forward range for its kernels.
  CHECK(rules.classifyRange("forward-send-forward-recv") == RangeClass::kForward);
  CHECK(rules.isCommRange("forward-send-forward-recv"));
}

TEST_CASE("a CPU-only step: every phase column from its nested ranges and collectives, to the ns") {
  EventStream s = cpuStep();
  auto recs = assemble(s);
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].step == 3);
  checkCpuColumns(recs[0]);
}

TEST_CASE("the same step with one kernel keeps the kernel semantics and no flag") {
  EventStream s = cpuStep();
  s.kernel("gemm", 2000, 2500, 7, 1500, 1);  // launched in thread 1's forward
  auto recs = assemble(s);
  REQUIRE(recs.size() == 1);
  const StepRecord& r = recs[0];
  CHECK(r.flags == 0);
  CHECK(r.phase(PhaseColumn::kForward) == 500);
  CHECK(r.phase(PhaseColumn::kBackward) == 0);
  CHECK(r.phase(PhaseColumn::kOptimizer) == 0);
  CHECK(r.phase(PhaseColumn::kCompute) == 500);
  CHECK(r.phase(PhaseColumn::kCommTotal) == 0);
  CHECK(r.phase(PhaseColumn::kCommExposed) == 0);
  CHECK(r.phase(PhaseColumn::kDataWait) == 500);
  CHECK(r.phase(PhaseColumn::kGpuIdle) == 9500);
}

TEST_CASE("a mixed session: only steps the device took no part in use their CPU ranges") {
  EventStream s;
  // Step 1 [0,1000): a kernel launched in forward runs into step 2's window.
  s.range("ProfilerStep#1", 0, 1000);
  s.range("forward", 0, 900);
  s.kernel("gemm", 600, 1200, 7, 500, 1);
  // Step 2 [1000,2000): no member, but the device is busy in its window: kernel semantics.
  s.range("ProfilerStep#2", 1000, 2000);
  s.range("forward", 1100, 1900);
  // Step 3 [2000,3000): no device activity at all.
  s.range("ProfilerStep#3", 2000, 3000);
  s.range("forward", 2100, 2600);
  s.range("nccl:AllReduce", 2600, 2900);
  // Step 4 [3000,4000): no device activity and only a data range: nothing to fill from.
  s.range("ProfilerStep#4", 3000, 4000);
  s.range("dataloader", 3000, 3200);
  auto recs = assemble(s);
  REQUIRE(recs.size() == 4);

  CHECK(recs[0].flags == 0);
  CHECK(recs[0].phase(PhaseColumn::kForward) == 600);
  CHECK(recs[0].phase(PhaseColumn::kGpuIdle) == 600);

  CHECK(recs[1].flags == 0);
  CHECK(recs[1].phase(PhaseColumn::kForward) == 0);
  CHECK(recs[1].phase(PhaseColumn::kGpuIdle) == 800);

  CHECK(recs[2].flags == kStepCpuPhases);
  CHECK(recs[2].phase(PhaseColumn::kForward) == 500);
  CHECK(recs[2].phase(PhaseColumn::kCompute) == 500);
  CHECK(recs[2].phase(PhaseColumn::kCommTotal) == 300);
  CHECK(recs[2].phase(PhaseColumn::kCommExposed) == 300);
  CHECK(recs[2].phase(PhaseColumn::kGpuIdle) == 0);

  CHECK(recs[3].flags == 0);
  CHECK(recs[3].phase(PhaseColumn::kDataWait) == 200);
  CHECK(recs[3].phase(PhaseColumn::kCompute) == 0);
  CHECK(recs[3].phase(PhaseColumn::kGpuIdle) == 1000);
}

TEST_CASE("CPU-only steps in steady state: the same columns every step") {
  // Many steps through one assembler: the scratch is reused, pruning drops old ranges.
  EventStream s;
  for (int64_t i = 0; i < 50; ++i) {
    int64_t b = i * 1000;
    s.range("ProfilerStep#" + std::to_string(i), b, b + 1000);
    s.range("forward", b + 100, b + 400);
    s.range("backward", b + 400, b + 800);
    s.range("nccl:AllReduce", b + 600, b + 750);
  }
  auto recs = assemble(s);
  REQUIRE(recs.size() == 50);
  for (const StepRecord& r : recs) {
    CAPTURE(r.step);
    CHECK(r.flags == kStepCpuPhases);
    CHECK(r.phase(PhaseColumn::kForward) == 300);
    CHECK(r.phase(PhaseColumn::kBackward) == 400);
    CHECK(r.phase(PhaseColumn::kCompute) == 550);
    CHECK(r.phase(PhaseColumn::kCommTotal) == 150);
    CHECK(r.phase(PhaseColumn::kCommExposed) == 150);
  }
}
