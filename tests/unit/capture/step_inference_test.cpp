// Steps inferred from a repeating kernel sequence when a stream carries no markers.
#include <doctest/doctest.h>

#include "capture/step_assembler.h"
#include "capture/step_period_detector.h"
#include "event_stream.h"

using namespace argus::capture;
using namespace argus::capture::testing;
using argus::model::PhaseColumn;

namespace {

// One iteration: embedding, 4 x (gemm, gelu) on two streams, loss, optimizer; the device
// idles 1000 ns before each iteration (the host syncs on the loss).
struct Synthetic {
  EventStream s;
  std::vector<int64_t> iteration_starts;
};

Synthetic repeating(int iterations, int64_t t0 = 1'000'000) {
  Synthetic out;
  int64_t t = t0;
  for (int i = 0; i < iterations; ++i) {
    t += 1000;  // idle gap
    out.iteration_starts.push_back(t);
    out.s.kernel("embedding_fwd", t, t + 100), t += 100;
    for (int layer = 0; layer < 4; ++layer) {
      out.s.kernel("gemm", t, t + 300), t += 300;
      out.s.kernel("gelu", t, t + 50, 9), t += 50;
    }
    out.s.kernel("loss", t, t + 20), t += 20;
    out.s.kernel("multi_tensor_apply_kernel", t, t + 80), t += 80;
  }
  return out;
}

}  // namespace

TEST_CASE("detector: period and anchor of a repeating sequence") {
  Synthetic syn = repeating(20);
  StepPeriodDetector d;
  int64_t end = INT64_MIN;
  bool found = false;
  for (const TraceEvent& e : syn.s.events) {
    bool opt = e.name == syn.s.names.find("multi_tensor_apply_kernel");
    found = d.add(e.id, e.start_ns, end == INT64_MIN ? 0 : e.start_ns - end, opt) || found;
    end = std::max(end, e.end_ns);
  }
  REQUIRE(found);
  CHECK(d.periodKernels() == 11);
  CHECK(d.anchor() == syn.s.sig("embedding_fwd"));  // follows the idle gap
  REQUIRE(d.anchorStarts().size() >= 3);
  CHECK(d.anchorStarts()[0] == syn.iteration_starts[0]);
}

TEST_CASE("detector: no gaps, the anchor follows the optimizer kernel") {
  EventStream s;
  int64_t t = 0;
  for (int i = 0; i < 30; ++i) {
    for (const char* k : {"a", "b", "c", "d"}) s.kernel(k, t, t + 10), t += 10;
    s.kernel("adam_step", t, t + 10), t += 10;
    s.kernel("e", t, t + 10), t += 10;
  }
  StepPeriodDetector d;
  bool found = false;
  for (const TraceEvent& e : s.events) found = d.add(e.id, e.start_ns, 0, e.name == s.names.find("adam_step")) || found;
  REQUIRE(found);
  CHECK(d.periodKernels() == 6);
  CHECK(d.anchor() == s.sig("e"));
}

TEST_CASE("detector: an aperiodic stream finds nothing") {
  StepPeriodDetector d({.window_kernels = 4096});
  uint64_t x = 88172645463325252ull;
  bool found = false;
  for (int i = 0; i < 4096; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    found = d.add(x, i * 10, 0, false) || found;
  }
  CHECK_FALSE(found);
  CHECK(d.windowFull());
}

TEST_CASE("assembler infers steps, flags them, and folds each iteration") {
  Synthetic syn = repeating(100);
  Collected c;
  StepAssemblerOptions opt;
  opt.emit_lag_ns = 10'000;
  StepAssembler a(syn.s.names, opt, c.callback());
  for (const TraceEvent& e : syn.s.events) a.onEvent(e);
  a.flush();
  // 100 anchors: 99 closed iterations; the last one is open at flush and dropped.
  REQUIRE(c.records.size() == 99);
  CHECK(a.stats().open_steps_dropped == 1);
  CHECK(a.stats().steps_inferred == 99);
  CHECK(a.stats().outside_steps == 11);  // the kernels of that dropped iteration
  for (size_t i = 0; i < c.records.size(); ++i) {
    const auto& r = c.records[i];
    CHECK(r.step == i);
    CHECK((r.flags & argus::model::kStepInferred) != 0);
    CHECK(r.start_ns == syn.iteration_starts[i]);
    CHECK(r.end_ns == syn.iteration_starts[i + 1]);
    REQUIRE(findKernel(r, syn.s.sig("gemm")) != nullptr);
    CHECK(findKernel(r, syn.s.sig("gemm"))->count == 4);
    CHECK(r.kernels.size() == 5);
    CHECK(r.phase(PhaseColumn::kCompute) == 1600);
    CHECK(r.phase(PhaseColumn::kGpuIdle) == 1000);  // the gap before the next iteration
    CHECK(r.phase(PhaseColumn::kOptimizer) == 80);
  }
}

TEST_CASE("a marker ends inference: later steps come from markers") {
  Synthetic syn = repeating(30);
  int64_t t = syn.s.events.back().end_ns + 5000;
  syn.s.range("ProfilerStep#500", t, t + 1000);
  syn.s.kernel("gemm", t + 100, t + 200);
  Collected c;
  StepAssembler a(syn.s.names, {}, c.callback());
  for (const TraceEvent& e : syn.s.events) a.onEvent(e);
  a.flush();
  REQUIRE(!c.records.empty());
  const auto& last = c.records.back();
  CHECK(last.step == 500);
  CHECK(last.flags == 0);
  CHECK((c.records[c.records.size() - 2].flags & argus::model::kStepInferred) != 0);
}
