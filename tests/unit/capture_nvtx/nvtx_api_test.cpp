// The real NVTX API in this process: the test includes the toolkit's nvtx3 implementation
// and injects Argus statically (InitializeInjectionNvtx2_fnptr, NVTX's load sequence v2),
// so every nvtx* call goes through NVTX's loader and dispatch into initializeInjection()'s
// handlers. (nvtx_injection_test does the same through NVTX_INJECTION64_PATH and dlopen.)
#include <cstdint>
extern "C" int (*InitializeInjectionNvtx2_fnptr)(const void* (*)(uint32_t));
#define NVTX_STATIC_INJECTION_IMPL
#include <doctest/doctest.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdlib>

#include "capture/nvtx/nvtx_injection.h"
#include "nvtx_test_util.h"

using namespace argus::capture;
using argus::capture::nvtx::testing::Collected;

namespace {
int g_inits = 0;
int countingInit(NvtxGetExportTableFunc_t get) {
  ++g_inits;
  return argus::capture::nvtx::initializeInjection(get);
}
}  // namespace

extern "C" {
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = countingInit;
}

TEST_CASE("initializeInjection installs the handlers into a real NVTX instance") {
  REQUIRE(std::getenv("NVTX_INJECTION64_PATH") == nullptr);  // a dynamic injection would win
  Collected c;
  CHECK(nvtxRangePushA("forward") == 0);  // the first call loads the injection
  CHECK(g_inits == 1);
  nvtxRangePushW(L"backward");
  nvtxMarkA("tick");
  CHECK(nvtxRangePop() == 1);
  CHECK(nvtxRangePop() == 0);
  nvtxDomainHandle_t d = nvtxDomainCreateA("argus");
  CHECK(d != nullptr);
  nvtxStringHandle_t s = nvtxDomainRegisterStringA(d, "optimizer");
  CHECK(s != nullptr);
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = s;
  nvtxDomainRangePushEx(d, &a);
  nvtxDomainRangePop(d);
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "step";
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  a.payload.ullValue = 41;
  nvtxDomainMarkEx(d, &a);
  nvtxRangeEnd(nvtxDomainRangeStartEx(d, &a));
  nvtxRangeEnd(nvtxRangeStartA("data_load"));
  nvtxNameOsThreadA(1234, "main");
  nvtxDomainDestroy(d);
  CHECK(g_inits == 1);

  auto ev = c.pull();
  REQUIRE(ev.size() == 9);
  CHECK(ev[0].type == EventType::kRangeBegin);
  CHECK(c.name(ev[0]) == "forward");
  CHECK(c.name(ev[1]) == "backward");
  CHECK(ev[2].type == EventType::kMark);
  CHECK(ev[3].type == EventType::kRangeEnd);
  CHECK(ev[4].type == EventType::kRangeEnd);
  CHECK(ev[5].type == EventType::kRange);
  CHECK(c.name(ev[5]) == "argus:optimizer");
  CHECK(ev[6].type == EventType::kMark);
  CHECK(c.name(ev[6]) == "argus:step#41");
  CHECK(c.name(ev[7]) == "argus:step#41");
  CHECK(c.name(ev[8]) == "data_load");
  CHECK(c.drain.threadNames().at(1234) == "main");
}
