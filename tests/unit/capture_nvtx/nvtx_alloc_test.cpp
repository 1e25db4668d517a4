// In steady state nothing allocates: not the recording calls on the training thread (any
// NVTX call, any domain, named by cached, registered or wide strings), and not the drain.
// This executable replaces operator new to count.
#include <doctest/doctest.h>

#include "capture/nvtx/nvtx_injection.h"
#include "nvtx_test_util.h"
#include "tests/unit/alloc_counter.h"

using argus::testing::allocationCount;
using namespace argus::capture;
using namespace argus::capture::nvtx;
using namespace argus::capture::nvtx::handlers;
using argus::capture::nvtx::testing::Collected;

namespace {

void oneStep(nvtxDomainHandle_t domain, nvtxStringHandle_t reg, int i) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = reg;
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  a.payload.ullValue = static_cast<uint64_t>(i);
  domainRangePushEx(domain, &a);
  rangePushA("forward");
  rangePushW(L"backward");
  markA("tick");
  rangePop();
  rangePop();
  rangeEnd(rangeStartA("data_load"));
  domainRangePop(domain);
}

}  // namespace

TEST_CASE("steady state: zero allocations per NVTX call and per drain") {
  nvtxDomainHandle_t domain = domainCreateA("alloc");
  nvtxStringHandle_t reg = domainRegisterStringA(domain, "microbatch");
  Collected c;
  // Warm-up: this thread's state, its cached names, the drain's buffers and name table.
  for (int i = 0; i < 200; ++i) oneStep(domain, reg, i);
  c.drain.drain();
  for (int i = 0; i < 200; ++i) oneStep(domain, reg, i);
  c.drain.drain();

  long before = allocationCount();
  for (int i = 0; i < 200; ++i) oneStep(domain, reg, i);
  long recording = allocationCount() - before;
  size_t events = c.drain.drain().size();
  long total = allocationCount() - before;
  CHECK(recording == 0);
  CHECK(total == 0);
  CHECK(events == 200 * 7);  // 1 domain range, 2 + 2 begin/end, 1 mark, 1 start/end range
}
