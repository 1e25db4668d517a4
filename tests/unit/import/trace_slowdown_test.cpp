// slowComputeKernels: a rank's compute kernels stretched, the work after them on the same
// stream pushed later, NCCL kernels, copies and CPU events kept as long as they were.
#include <doctest/doctest.h>

#include "import/trace_slowdown.h"

using namespace argus;
using capture::EventType;
using capture::TraceEvent;

namespace {

TraceEvent event(EventType type, int64_t start, int64_t end, uint32_t stream, uint32_t name = 0) {
  TraceEvent e;
  e.type = type;
  e.start_ns = start;
  e.end_ns = end;
  e.stream = stream;
  e.name = name;
  return e;
}

}  // namespace

TEST_CASE("compute kernels last factor times longer and push later work on their stream") {
  capture::NameTable names;
  const uint32_t gemm = names.intern("ampere_sgemm_128x64_nn");
  const uint32_t nccl = names.intern("ncclKernel_AllReduce_RING_LL_Sum_float");
  std::vector<TraceEvent> events = {
      event(EventType::kRange, 0, 10'000, 0),               // CPU: untouched
      event(EventType::kKernel, 1'000, 2'000, 7, gemm),     // stretched to 1,500
      event(EventType::kKernel, 2'000, 3'000, 7, nccl),     // shifted by 500, not stretched
      event(EventType::kMemcpy, 3'500, 4'000, 7),           // shifted by 500
      event(EventType::kKernel, 4'000, 4'100, 7, gemm),     // shifted by 500, stretched by 50
      event(EventType::kKernel, 1'000, 1'400, 9, gemm),     // its own stream: stretched only
  };
  CHECK(import::slowComputeKernels(names, 1.5, events) == 3);
  // Back in replay order: by start time, CPU first.
  auto find = [&](int64_t start, uint32_t stream) {
    for (const TraceEvent& e : events) {
      if (e.start_ns == start && e.stream == stream) return e;
    }
    FAIL("no event at " << start << " on stream " << stream);
    return TraceEvent{};
  };
  CHECK(events.front().type == EventType::kRange);
  CHECK(events.front().end_ns == 10'000);
  CHECK(find(1'000, 7).end_ns == 2'500);
  CHECK(find(2'500, 7).end_ns == 3'500);  // the NCCL kernel
  CHECK(find(4'000, 7).end_ns == 4'500);  // the copy
  CHECK(find(4'500, 7).end_ns == 4'650);
  CHECK(find(1'000, 9).end_ns == 1'600);
  for (size_t i = 1; i < events.size(); ++i) CHECK(events[i - 1].start_ns <= events[i].start_ns);
}

TEST_CASE("a factor of 1 changes nothing") {
  capture::NameTable names;
  std::vector<TraceEvent> events = {event(EventType::kKernel, 100, 200, 1, names.intern("k")), event(EventType::kKernel, 200, 300, 1, names.intern("k"))};
  CHECK(import::slowComputeKernels(names, 1, events) == 2);
  CHECK(events[0].end_ns == 200);
  CHECK(events[1].start_ns == 200);
  CHECK(events[1].end_ns == 300);
}
