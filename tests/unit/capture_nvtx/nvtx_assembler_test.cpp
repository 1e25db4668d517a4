// What the step assembler makes of the NVTX source's events: steps from an "argus" domain
// marker numbered by its payload, and the forward / backward / optimizer phases of the
// kernels launched inside the NVTX ranges of the launching thread.
#include <doctest/doctest.h>

#include "capture/nvtx/epoch_clock.h"
#include "capture/nvtx/nvtx_injection.h"
#include "capture/step_assembler.h"
#include "nvtx_test_util.h"

using namespace argus;
using namespace argus::capture;
using namespace argus::capture::nvtx;
using namespace argus::capture::nvtx::handlers;
using argus::capture::nvtx::testing::Collected;
using argus::capture::nvtx::testing::currentTid;

namespace {

nvtxEventAttributes_t attributes() {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  return a;
}

// A GPU kernel launched at `launch` on this thread, running [launch + 10 us, + dur).
TraceEvent kernel(NameTable& names, const char* name, int64_t launch, int64_t dur_ns) {
  TraceEvent k;
  k.type = EventType::kKernel;
  k.name = names.intern(name);
  k.launch_ns = launch;
  k.start_ns = launch + 10'000;
  k.end_ns = k.start_ns + dur_ns;
  k.thread = currentTid();
  k.stream = 7;
  return k;
}

}  // namespace

TEST_CASE("NVTX steps and phases drive the StepAssembler") {
  Collected c;
  nvtxDomainHandle_t argus = domainCreateA("argus");
  nvtxStringHandle_t optimizer = domainRegisterStringA(argus, "optimizer");
  std::vector<TraceEvent> kernels;
  for (uint64_t step = 5; step < 8; ++step) {
    nvtxEventAttributes_t s = attributes();
    s.messageType = NVTX_MESSAGE_TYPE_ASCII;
    s.message.ascii = "step";
    s.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    s.payload.ullValue = step;
    domainRangePushEx(argus, &s);
    rangePushA("forward");
    kernels.push_back(kernel(c.names, "gemm_fwd", EpochClock::nowNs(), 50'000));
    rangePop();
    rangePushW(L"backward");
    kernels.push_back(kernel(c.names, "gemm_dgrad", EpochClock::nowNs(), 80'000));
    rangePop();
    nvtxEventAttributes_t o = attributes();
    o.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    o.message.registered = optimizer;
    domainRangePushEx(argus, &o);
    kernels.push_back(kernel(c.names, "gemm_x", EpochClock::nowNs(), 20'000));  // named like forward work
    domainRangePop(argus);
    domainRangePop(argus);
  }
  std::vector<TraceEvent> stream = c.pull();
  REQUIRE(stream.size() == 3 * (1 + 4 + 1));  // per step: the step range, two begin/end pairs, the optimizer range
  stream.insert(stream.end(), kernels.begin(), kernels.end());

  std::vector<model::StepRecord> records;
  StepAssembler a(c.names, StepAssemblerOptions{}, [&](const StepOutput& o) { records.push_back(o.record); });
  for (const TraceEvent& e : stream) a.onEvent(e);
  a.flush();
  REQUIRE(records.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(records[i].step == 5 + i);
    CHECK((records[i].flags & model::kStepInferred) == 0);
    CHECK(records[i].phase(model::PhaseColumn::kForward) == 50'000);
    CHECK(records[i].phase(model::PhaseColumn::kBackward) == 80'000);
    CHECK(records[i].phase(model::PhaseColumn::kOptimizer) == 20'000);
  }
  CHECK(a.stats().unmatched_range_ends == 0);
  CHECK(a.stats().bad_step_markers == 0);
}
