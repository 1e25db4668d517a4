// Hostile and broken streams: counted, reported in-band, never a crash.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <span>
#include <string>

#include "capture/step_assembler.h"
#include "event_stream.h"

using namespace argus::capture;
using namespace argus::capture::testing;
using argus::model::EventKind;
using argus::model::PhaseColumn;

namespace {

uint64_t droppedReported(const argus::model::StepRecord& r) {
  for (const auto& ev : r.events) {
    if (ev.kind == EventKind::kDroppedEvents) return ev.value;
  }
  return 0;
}

}  // namespace

TEST_CASE("events later than the lag are dropped, counted, and reported in the next record") {
  EventStream s;
  s.range("ProfilerStep#1", 0, 1000);
  s.kernel("gemm", 100, 200);
  s.range("ProfilerStep#2", 1000, 2000);
  s.range("ProfilerStep#3", 5000, 6000);  // watermark 5000: steps 1 and 2 are out (lag 1000)
  s.kernel("gemm", 5100, 5200, 7, 5050);
  s.kernel("gemm", 300, 400);             // belongs to step 1: too late
  s.range("forward", 100, 900);           // a range wholly inside step 1: too late
  Collected c;
  StepAssemblerOptions opt;
  opt.emit_lag_ns = 1000;
  AssemblerStats st;
  assemble(s, &c, opt, &st);
  REQUIRE(c.records.size() == 3);
  CHECK(c.records[0].kernels.at(0).count == 1);
  CHECK(st.late_events == 2);
  CHECK(droppedReported(c.records[2]) == 2);
  CHECK(droppedReported(c.records[0]) == 0);
  CHECK(droppedReported(c.records[1]) == 0);
}

TEST_CASE("unmatched pops, depth overflow, steps out of order") {
  EventStream s;
  s.pop(10);  // nothing open
  s.pop(20, 5);
  for (int i = 0; i < 10; ++i) s.push("forward", 100 + i);
  for (int i = 0; i < 10; ++i) s.pop(200 + i);
  s.range("ProfilerStep#2", 1000, 2000);
  s.range("ProfilerStep#1", 500, 900);  // begins before a pending step: out of order
  s.kernel("gemm", 1100, 1200);
  StepAssemblerOptions opt;
  opt.max_range_depth = 4;
  Collected c;
  AssemblerStats st;
  assemble(s, &c, opt, &st);
  CHECK(st.unmatched_range_ends == 2);
  CHECK(st.range_depth_overflow == 6);
  CHECK(st.bad_step_markers == 1);
  REQUIRE(c.records.size() == 1);
  CHECK(c.records[0].step == 2);
}

TEST_CASE("absurd timestamps are invalid; a lone leap does not flush pending steps") {
  EventStream s;
  s.range("ProfilerStep#1", 1000, 2000);
  s.kernel("gemm", 1100, 1200);
  s.kernel("neg", -5, 10);                    // negative time
  s.kernel("backwards", 1500, 1400);          // ends before it starts
  s.kernel("huge", INT64_MAX - 10, INT64_MAX);  // beyond 2^62
  s.kernel("forever", 1500, 1500 + 4'000'000'000'000);  // > max_event_ns
  s.kernel("leap", 1'000'000'000'000'000, 1'000'000'000'000'100);  // a lone jump of ~11 days
  s.kernel("gemm", 1300, 1400);               // still accepted: step 1 was not flushed
  TraceEvent bad_name = s.kernel("x", 1500, 1600);
  s.events.back().name = 0xfffffff0u;         // an id the table never gave
  s.events.back().id = 0;                     // and no signature: computed from ""
  s.kernel("late_launch", 1600, 1700, 7, 5000);  // launched after it ended: launch ignored
  Collected c;
  AssemblerStats st;
  assemble(s, &c, {}, &st);
  CHECK(st.invalid_events == 5);
  REQUIRE(c.records.size() == 1);
  CHECK(findKernel(c.records[0], s.sig("gemm"))->count == 2);
  CHECK(findKernel(c.records[0], s.sig("late_launch")) != nullptr);
  CHECK(droppedReported(c.records[0]) == 5);
  (void)bad_name;
}

TEST_CASE("a confirmed clock jump is accepted (its first event is lost)") {
  EventStream s;
  const int64_t day = 86'400'000'000'000;
  s.range("ProfilerStep#1", 1000, 2000);
  s.kernel("gemm", 1100, 1200);
  s.kernel("gemm", day + 50, day + 60);  // the leap: held as suspect, dropped
  s.range("ProfilerStep#2", day, day + 1000);  // a second event near it confirms the jump
  s.kernel("gemm", day + 100, day + 200);
  Collected c;
  AssemblerStats st;
  assemble(s, &c, {}, &st);
  CHECK(st.invalid_events == 1);
  REQUIRE(c.records.size() == 2);
  CHECK(c.records[1].step == 2);
  CHECK(c.records[1].kernels.at(0).count == 1);
}

TEST_CASE("time that advances in steps below max_clock_jump_ns is never a jump, however far it goes") {
  // plausible()'s fast bound is set when the slow check last ran, not per event: events
  // beyond it take the slow check, which accepts them against the current watermark.
  EventStream s;
  const int64_t minute = 60'000'000'000;
  StepAssemblerOptions opt;
  opt.max_clock_jump_ns = 10 * minute;
  for (int i = 0; i < 100; ++i) {
    s.range("ProfilerStep#" + std::to_string(i + 1), i * 4 * minute, i * 4 * minute + 1000);
    s.kernel("gemm", i * 4 * minute + 100, i * 4 * minute + 200);
  }
  s.kernel("gemm", 99 * 4 * minute + 30 * minute, 99 * 4 * minute + 30 * minute + 10);  // a lone leap of 30 min
  Collected c;
  assemble(s, &c, opt);
  CHECK(c.records.size() == 100);
  for (const auto& r : c.records) CHECK(r.kernels.at(0).count == 1);
}

TEST_CASE("the buffer bound drops work and flags the step partial") {
  EventStream s;
  s.range("ProfilerStep#1", 0, 100000);
  for (int i = 0; i < 100; ++i) s.kernel("gemm", 10 + i * 100, 60 + i * 100);
  StepAssemblerOptions opt;
  opt.max_buffered_events = 40;
  Collected c;
  AssemblerStats st;
  assemble(s, &c, opt, &st);
  REQUIRE(c.records.size() == 1);
  CHECK(st.buffer_full == 60);
  CHECK(c.records[0].kernels.at(0).count == 40);
  CHECK((c.records[0].flags & argus::model::kStepPartial) != 0);
}

TEST_CASE("a long run prunes the work of emitted steps: a bound of three steps never drops any") {
  // 300 steps of 50 kernels, each step's last kernel running into the next step (it stays
  // buffered past its step's emit), the records of the first half's steps in a shuffled
  // order (the fold sorts them), the rest in order, and a buffer bound of three steps' work:
  // the bound holds only if every step's dead work is pruned after its emit, and nothing
  // live with it.
  constexpr int kSteps = 300, kKernels = 50;
  constexpr int64_t kStepNs = 100'000;
  std::mt19937_64 rng(3);
  EventStream s;
  for (int step = 0; step < kSteps; ++step) {
    const int64_t b = step * kStepNs;
    s.range("ProfilerStep#" + std::to_string(step), b, b + kStepNs);
    const size_t first = s.events.size();
    for (int k = 0; k < kKernels; ++k) {
      const int64_t start = b + 1'000 + k * 1'900;
      const int64_t end = k + 1 == kKernels ? start + kStepNs / 2 : start + 1'000;  // the last one straddles
      s.kernel(k % 2 ? "gemm" : "relu", start, end, 7, start - 500);
    }
    if (step < kSteps / 2) std::shuffle(s.events.begin() + static_cast<std::ptrdiff_t>(first), s.events.end(), rng);
  }
  StepAssemblerOptions opt;
  opt.emit_lag_ns = kStepNs;
  opt.max_buffered_events = 3 * kKernels;
  Collected c;
  AssemblerStats st;
  assemble(s, &c, opt, &st);
  CHECK(st.buffer_full == 0);
  CHECK(st.late_events == 0);
  REQUIRE(c.records.size() == kSteps);
  for (const auto& r : c.records) {
    uint64_t kernels = 0;
    for (const auto& k : r.kernels) kernels += k.count;
    CHECK(kernels == kKernels);
  }
}

TEST_CASE("random garbage never crashes and keeps every counter consistent") {
  std::mt19937_64 rng(7);
  EventStream s;
  for (const char* n : {"ProfilerStep#1", "ProfilerStep#2", "argus:step", "forward", "backward", "microbatch",
                        "ncclKernel_AllReduce", "gemm", "enumerate(DataLoader)"}) {
    s.names.intern(n);
  }
  StepAssemblerOptions opt;
  opt.emit_lag_ns = 5000;
  opt.max_buffered_events = 5000;
  size_t records = 0;
  StepAssembler a(s.names, opt, [&](const StepOutput& out) {
    ++records;
    const auto& r = out.record;
    CHECK(r.end_ns >= r.start_ns);
    for (int64_t v : r.phase_ns) CHECK(v >= 0);
    CHECK(r.phase(PhaseColumn::kGpuIdle) <= r.iter_ns);
    CHECK(r.phase(PhaseColumn::kLaunchGap) <= r.phase(PhaseColumn::kGpuIdle));
    CHECK(r.phase(PhaseColumn::kCommExposed) <= r.phase(PhaseColumn::kCommTotal));
  });
  int64_t t = 0;
  for (int i = 0; i < 200000; ++i) {
    TraceEvent e;
    e.type = static_cast<EventType>(rng() % 10);
    t += static_cast<int64_t>(rng() % 200) - 20;  // mostly forward, sometimes back
    e.start_ns = (rng() % 1000 == 0) ? static_cast<int64_t>(rng()) : t;
    e.end_ns = e.start_ns + static_cast<int64_t>(rng() % 3000) - 100;
    e.launch_ns = rng() % 2 ? kNoTime : e.start_ns - static_cast<int64_t>(rng() % 500);
    e.name = static_cast<uint32_t>(rng() % 12);
    e.thread = static_cast<uint32_t>(rng() % 3);
    e.correlation = static_cast<uint32_t>(rng() % 50);
    e.id = rng() % 16;
    e.bytes = rng() % 100000;
    e.op = static_cast<argus::model::CollectiveOp>(rng() % 11);
    e.copy_kind = static_cast<CopyKind>(rng() % 6);
    a.onEvent(e);
  }
  a.flush();
  CHECK(records > 0);
  CHECK(a.stats().events == 200000);
}

TEST_CASE("onEvents folds a batch exactly as onEvent folds its events one by one") {
  std::mt19937_64 rng(11);
  EventStream s;
  for (const char* n : {"ProfilerStep#1", "ProfilerStep#2", "forward", "backward", "ncclKernel_AllReduce", "gemm"}) s.names.intern(n);
  int64_t t = 1000;
  for (int i = 0; i < 50000; ++i) {
    TraceEvent e;
    e.type = static_cast<EventType>(rng() % 10);
    t += static_cast<int64_t>(rng() % 200) - 20;
    e.start_ns = (rng() % 2000 == 0) ? static_cast<int64_t>(rng()) : t;  // garbage now and then
    e.end_ns = e.start_ns + static_cast<int64_t>(rng() % 3000);
    e.launch_ns = rng() % 2 ? kNoTime : e.start_ns - static_cast<int64_t>(rng() % 500);
    e.name = static_cast<uint32_t>(rng() % 8);
    e.thread = static_cast<uint32_t>(rng() % 3);
    e.id = rng() % 8;
    s.events.push_back(e);
  }
  StepAssemblerOptions opt;
  opt.emit_lag_ns = 5000;
  Collected one, batch;
  StepAssembler a(s.names, opt, one.callback()), b(s.names, opt, batch.callback());
  for (const TraceEvent& e : s.events) a.onEvent(e);
  std::span<const TraceEvent> all(s.events);
  for (size_t i = 0; i < all.size(); i += 777) b.onEvents(all.subspan(i, std::min<size_t>(777, all.size() - i)));
  a.flush(), b.flush();
  CHECK(one.records.size() > 10);
  CHECK(one.records == batch.records);
  CHECK(a.stats().events == b.stats().events);
  CHECK(a.stats().invalid_events == b.stats().invalid_events);
  CHECK(a.stats().late_events == b.stats().late_events);
}
