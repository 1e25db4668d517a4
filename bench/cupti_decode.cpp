// bench_cupti_decode: CPU cost of turning CUPTI activity records into TraceEvents, per
// kernel record, on the draining thread (docs/capture/cupti.md). Not the training thread's
// cost: CUPTI's own per-launch overhead needs a GPU and is not measured here.
//
// Buffers are laid out with the toolkit's structs, as CUPTI writes them:
//   kernels      4 MiB of CUpti_ActivityKernel10 records: 300 distinct templated kernel
//                names x 3 launch geometries (names interned and hashed on the first pass).
//   launch mix   per launch, what launch attribution adds: our CUSTOM2 external correlation
//                record, the runtime API record, then the kernel record (costs per kernel).
// Each is decoded two ways, side by side in one run (the machine is shared: compare the
// ratios): with the real libcupti cuptiActivityGetNextRecord walking the buffer (the
// shim's path), and with ActivityDecoder::decode over known offsets (our code alone).
//
// Usage: bench_cupti_decode [passes=20]
//        bench_cupti_decode --callgrind   (under valgrind --tool=callgrind --instr-atstart=no;
//                                          bench/callgrind_cupti_decode.sh prints instructions per kernel)
// Prints figures; asserts nothing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "capture/cupti/activity_decoder.h"
#include "capture/cupti/cupti_api.h"
#include "capture/cupti/launch_contexts.h"

#include "bench/callgrind_section.h"

using namespace argus;
using namespace argus::capture;
using namespace argus::capture::cupti;
using Clock = std::chrono::steady_clock;

namespace {

constexpr uint64_t kT0 = 1'796'000'000'000'000'000ull;

struct Buffer {
  std::string label;
  std::vector<uint64_t> storage;  // 8-byte aligned, like CUPTI's
  size_t size = 0;
  std::vector<size_t> offsets;  // every record
  size_t kernels = 0;
  template <typename R>
  void add(const R& r) {
    offsets.push_back(size);
    storage.resize((size + sizeof(R) + 7) / 8);
    std::memcpy(reinterpret_cast<uint8_t*>(storage.data()) + size, &r, sizeof(R));
    size += sizeof(R);
  }
  uint8_t* bytes() { return reinterpret_cast<uint8_t*>(storage.data()); }
};

std::vector<std::string> kernelNames() {
  std::vector<std::string> names;
  const char* shapes[] = {"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_%dx%d_32x3_tn_align8>(Params)",
                          "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
                          "at::detail::Array<char*, %d> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, %d>)",
                          "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*) /* %d %d */",
                          "flash_fwd_kernel<Flash_fwd_kernel_traits<%d, 128, 64, 4, false, false, cutlass::bfloat16_t>, %d>"};
  char buf[512];
  for (int i = 0; i < 300; ++i) {
    std::snprintf(buf, sizeof(buf), shapes[i % 4], 64 + i, i);
    names.emplace_back(buf);
  }
  return names;
}

CUpti_ActivityKernel10 kernel(uint64_t t, uint32_t corr, const char* name, int geometry) {
  CUpti_ActivityKernel10 k;
  std::memset(&k, 0, sizeof(k));
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = t, k.end = t + 5000 + corr % 977, k.completed = k.end;
  k.deviceId = 0, k.contextId = 1, k.streamId = 7 + corr % 2;
  k.gridX = 108 * (1 + geometry), k.gridY = 1, k.gridZ = 1, k.blockX = 256, k.blockY = 1, k.blockZ = 1;
  k.correlationId = corr;
  k.name = name;
  return k;
}

Buffer kernelsBuffer(const std::vector<std::string>& names, bool launch_mix, LaunchContexts& contexts) {
  Buffer b;
  b.label = launch_mix ? "launch mix (ext corr + API + kernel)" : "kernels only";
  const size_t kBytes = size_t{4} << 20;
  uint64_t context = contexts.open(1, static_cast<int64_t>(kT0));
  for (uint32_t corr = 1; b.size + 216 + 64 <= kBytes; ++corr) {
    uint64_t t = kT0 + uint64_t{corr} * 6000;
    if (launch_mix) {
      if (corr % 50 == 0) context = contexts.open(1, static_cast<int64_t>(t));  // an NVTX range change
      CUpti_ActivityExternalCorrelation x;
      std::memset(&x, 0, sizeof(x));
      x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
      x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
      x.externalId = context;
      x.correlationId = corr;
      b.add(x);
      CUpti_ActivityAPI a;
      std::memset(&a, 0, sizeof(a));
      a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
      a.cbid = 211;
      a.start = t - 3000, a.end = t - 2000;
      a.correlationId = corr;
      b.add(a);
    }
    b.add(kernel(t, corr, names[(corr * 7) % names.size()].c_str(), static_cast<int>(corr % 3)));
    ++b.kernels;
  }
  return b;
}

struct Figures {
  double walker_ns = 0, direct_ns = 0;  // per kernel
  size_t events = 0;
};

Figures run(Buffer& b, const CuptiApi& api, LaunchContexts& contexts, int passes) {
  NameTable names;
  ActivityDecoder d(names, &contexts);
  std::vector<TraceEvent> out;
  out.reserve(b.kernels);
  d.decodeBuffer(api.activityGetNextRecord, b.bytes(), b.size, &out);  // warm: names interned
  Figures f;
  f.events = out.size();
  auto t0 = Clock::now();
  for (int p = 0; p < passes; ++p) {
    out.clear();
    d.decodeBuffer(api.activityGetNextRecord, b.bytes(), b.size, &out);
  }
  auto t1 = Clock::now();
  for (int p = 0; p < passes; ++p) {
    out.clear();
    const uint8_t* base = b.bytes();
    for (size_t off : b.offsets) {
      out.emplace_back();
      if (d.decode(base + off, b.size - off, &out.back()) != ActivityDecoder::Outcome::kEvent) out.pop_back();
    }
  }
  auto t2 = Clock::now();
  double per = 1.0 / (static_cast<double>(passes) * static_cast<double>(b.kernels));
  f.walker_ns = std::chrono::duration<double, std::nano>(t1 - t0).count() * per;
  f.direct_ns = std::chrono::duration<double, std::nano>(t2 - t1).count() * per;
  return f;
}

int callgrindMode(std::vector<Buffer>& buffers, const CuptiApi& api, LaunchContexts& contexts) {
  if (!ARGUS_HAVE_CALLGRIND) {
    std::fprintf(stderr, "bench_cupti_decode: built without <valgrind/callgrind.h>: --callgrind is unavailable\n");
    return 2;
  }
#if ARGUS_HAVE_CALLGRIND
  for (Buffer& b : buffers) {
    NameTable names;
    ActivityDecoder d(names, &contexts);
    std::vector<TraceEvent> out;
    out.reserve(b.kernels);
    d.decodeBuffer(api.activityGetNextRecord, b.bytes(), b.size, &out);  // warm
    out.clear();
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_ZERO_STATS;
    d.decodeBuffer(api.activityGetNextRecord, b.bytes(), b.size, &out);
    CALLGRIND_DUMP_STATS_AT(b.label.c_str());
    CALLGRIND_STOP_INSTRUMENTATION;
    std::printf("callgrind-stream\t%s\t%zu\t%zu\n", b.label.c_str(), b.offsets.size(), b.kernels);
  }
#endif
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool callgrind = argc > 1 && std::strcmp(argv[1], "--callgrind") == 0;
  int passes = !callgrind && argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  CuptiApi api;
  Status s = loadCuptiApi({}, &api);
  if (!s) {
    std::fprintf(stderr, "bench_cupti_decode: %s\n", s.toString().c_str());
    return 1;
  }
  std::vector<std::string> names = kernelNames();
  LaunchContexts contexts(1u << 16);
  std::vector<Buffer> buffers;
  buffers.push_back(kernelsBuffer(names, false, contexts));
  buffers.push_back(kernelsBuffer(names, true, contexts));
  if (callgrind) return callgrindMode(buffers, api, contexts);

  std::printf("bench_cupti_decode: %s, %d passes over 4 MiB buffers (warm name caches)\n", api.library.c_str(), passes);
  std::printf("%-40s %8s %8s %16s %16s %7s\n", "buffer", "records", "kernels", "walker ns/kern", "direct ns/kern", "ratio");
  for (Buffer& b : buffers) {
    Figures f = run(b, api, contexts, passes);
    std::printf("%-40s %8zu %8zu %16.1f %16.1f %7.2f\n", b.label.c_str(), b.offsets.size(), b.kernels, f.walker_ns, f.direct_ns,
                f.direct_ns > 0 ? f.walker_ns / f.direct_ns : 0.0);
  }
  return 0;
}
