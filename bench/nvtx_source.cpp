// bench_nvtx_source: what an NVTX call costs a training thread with Argus attached
// (docs/capture/nvtx.md, "Cost"; the target is well under 100 ns per push or pop).
//
// The program is its own NVTX application: it includes the toolkit's nvtx3 headers and
// injects Argus statically (InitializeInjectionNvtx2_fnptr, NVTX's load sequence v2), so
// nvtxRangePushA goes through NVTX's real dispatch into the Argus handler, exactly as in a
// training process (minus the dlopen). Each case runs in batches that fit the thread's ring
// and the Drain empties it between batches, outside the timing: steady state, no drops.
// Figures per call pair (push + pop) or per call, the best and the median batch; the drain's
// cost per TraceEvent next to them. The machine is shared and noisy: compare ratios.
//
// Usage: bench_nvtx_source [iterations=2000000]
//        bench_nvtx_source --callgrind [iterations=20000]   (under bench/callgrind_nvtx.sh)
// Prints figures; asserts nothing.
#if __has_include(<nvtx3/nvToolsExt.h>)
// This file carries the NVTX instance and defines the static injection pointer itself
// (below); NVTX's loader reads it, so it is declared first, spelled without NVTX's typedefs.
#include <cstdint>
extern "C" int (*InitializeInjectionNvtx2_fnptr)(const void* (*)(uint32_t));
#define NVTX_STATIC_INJECTION_IMPL
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "capture/name_table.h"
#include "capture/nvtx/epoch_clock.h"
#include "capture/nvtx/nvtx_drain.h"
#include "capture/nvtx/nvtx_injection.h"
#include "capture/nvtx/nvtx_recorder.h"

#include "bench/bench_case.h"
#include "bench/callgrind_section.h"

extern "C" {
static int argusInit(NvtxGetExportTableFunc_t get) {
  return argus::capture::nvtx::initializeInjection(get);
}
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = argusInit;
}

namespace {

using namespace argus::capture;
using Clock = std::chrono::steady_clock;
using argus::bench::Case;
using argus::bench::median;

std::vector<Case> cases(const std::vector<std::string>& unique_names) {
  static nvtxDomainHandle_t domain = nvtxDomainCreateA("argus");
  // Not a step marker: a payload on one would make a new name ("argus:step#N") per call.
  static nvtxStringHandle_t microbatch = nvtxDomainRegisterStringA(domain, "microbatch");
  nvtx::Recorder& rec = nvtx::Recorder::instance();
  return {
      {"nvtxRangePushA + nvtxRangePop (real NVTX path)", "pair",
       [](long n) {
         for (long i = 0; i < n; ++i) {
           nvtxRangePushA("forward");
           nvtxRangePop();
         }
       }},
      {"Recorder::push + pop (handler body, direct)", "pair",
       [&rec](long n) {
         for (long i = 0; i < n; ++i) {
           rec.push(0, nvtx::Message::ofAscii("forward"), {});
           rec.pop(0);
         }
       }},
      {"nvtxDomainRangePushEx (registered, u64 payload) + Pop", "pair",
       [](long n) {
         nvtxEventAttributes_t a{};
         a.version = NVTX_VERSION;
         a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
         a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
         a.message.registered = microbatch;
         a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
         for (long i = 0; i < n; ++i) {
           a.payload.ullValue = static_cast<uint64_t>(i);
           nvtxDomainRangePushEx(domain, &a);
           nvtxDomainRangePop(domain);
         }
       }},
      {"nvtxRangePushW + nvtxRangePop", "pair",
       [](long n) {
         for (long i = 0; i < n; ++i) {
           nvtxRangePushW(L"backward");
           nvtxRangePop();
         }
       }},
      {"nvtxRangeStartA + nvtxRangeEnd", "pair",
       [](long n) {
         for (long i = 0; i < n; ++i) nvtxRangeEnd(nvtxRangeStartA("data_load"));
       }},
      {"nvtxMarkA", "call",
       [](long n) {
         for (long i = 0; i < n; ++i) nvtxMarkA("tick");
       }},
      {"nvtxRangePushA + Pop, 4096 distinct names (cache misses)", "pair",
       [&unique_names](long n) {
         for (long i = 0; i < n; ++i) {
           nvtxRangePushA(unique_names[static_cast<size_t>(i) & 4095].c_str());
           nvtxRangePop();
         }
       }},
      argus::bench::clockReadCase(),
  };
}

int callgrindMode(long n, const std::vector<std::string>& unique_names) {
#if ARGUS_HAVE_CALLGRIND
  // No drain thread: the rings hold every record of one case, drained between cases.
  nvtx::Recorder::instance().setRingSlots(1u << 20);
  NameTable names;
  nvtxMarkA("warm-up");  // attaches NVTX and this thread
  nvtx::Drain drain(nvtx::Recorder::instance(), names);
  for (const Case& c : cases(unique_names)) {
    c.run(1000);  // warm: thread state, names cached
    drain.drain();
    CALLGRIND_START_INSTRUMENTATION;
    c.run(n);
    CALLGRIND_STOP_INSTRUMENTATION;
    CALLGRIND_DUMP_STATS_AT(c.label);
    drain.drain();
    std::printf("callgrind-case\t%s\t%s\t%ld\n", c.label, c.unit, n);
  }
  return 0;
#else
  (void)n;
  (void)unique_names;
  std::fprintf(stderr, "bench_nvtx_source: built without <valgrind/callgrind.h>: --callgrind is unavailable\n");
  return 1;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  bool callgrind = argc > 1 && std::strcmp(argv[1], "--callgrind") == 0;
  int arg = callgrind ? 2 : 1;
  long n = argc > arg ? std::atol(argv[arg]) : (callgrind ? 20000 : 2000000);
  std::vector<std::string> unique_names;
  for (int i = 0; i < 4096; ++i) unique_names.push_back("aten::op_" + std::to_string(i) + ", seq = " + std::to_string(i * 7));
  if (callgrind) return callgrindMode(n, unique_names);

  // A batch of kBatch iterations writes at most ~4 slots each (a name definition, its text,
  // the event, a pop): the ring holds a whole batch.
  constexpr long kBatch = 4096;
  nvtx::Recorder::instance().setRingSlots(1u << 15);
  nvtxMarkA("warm-up");  // NVTX initializes (injection) and this thread gets its ring
  NameTable names;
  nvtx::Drain drain(nvtx::Recorder::instance(), names);
  std::printf("bench_nvtx_source: %ld iterations per case in batches of %ld, drained between batches\n", n, kBatch);
  std::printf("%-58s %5s %9s %9s %13s\n", "case", "per", "best ns", "median ns", "drain ns/evt");
  for (const Case& c : cases(unique_names)) {
    c.run(kBatch);  // warm-up: names cached, pages touched
    drain.drain();
    std::vector<double> batch_ns;
    double drain_ns = 0;
    uint64_t events = 0;
    for (long done = 0; done < n; done += kBatch) {
      auto t0 = Clock::now();
      c.run(kBatch);
      auto t1 = Clock::now();
      events += drain.drain().size();
      auto t2 = Clock::now();
      batch_ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / kBatch);
      drain_ns += std::chrono::duration<double, std::nano>(t2 - t1).count();
    }
    std::printf("%-58s %5s %9.1f %9.1f %13.1f\n", c.label, c.unit, *std::min_element(batch_ns.begin(), batch_ns.end()), median(batch_ns),
                events ? drain_ns / static_cast<double>(events) : 0.0);
  }
  nvtx::NvtxStats s = drain.stats();
  std::printf("records %llu, events %llu, dropped (ring full) %llu, names interned %u\n", static_cast<unsigned long long>(s.records),
              static_cast<unsigned long long>(s.events), static_cast<unsigned long long>(s.dropped), names.size());
  return 0;
}

#else  // no CUDA toolkit headers
#include <cstdio>
int main() {
  std::puts("bench_nvtx_source: built without the toolkit's nvtx3 headers; nothing to measure");
  return 0;
}
#endif
