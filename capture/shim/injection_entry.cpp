// The entry points of libargus_capture.so, the only symbols it exports
// (libargus_capture.map): NVTX's and CUDA's injection hooks and the NCCL profiler plugin
// tables (NCCL_PROFILER_PLUGIN). Whichever runs first starts the process's one Collector
// (docs/capture/shim.md, "Start and exit").
#include <pthread.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "capture/nccl/nccl_plugin.h"
#include "capture/nvtx/nvtx_injection.h"
#include "capture/shim/collector.h"
#include "capture/shim/shim_config.h"
#include "capture/shim/shim_log.h"

namespace {

using argus::capture::shim::Collector;

// Leaked on purpose: training threads may still make NVTX calls while static destructors
// run; the Collector is shut down by the atexit hook and its memory left to the OS.
Collector* g_collector = nullptr;
std::once_flag g_start;

void onExit() {
  if (g_collector != nullptr) g_collector->shutdown();
}

void onForkChild() {
  if (g_collector != nullptr) g_collector->abandonAfterFork();
}

// Returns the running Collector, or nullptr when the shim is off (ARGUS_DISABLE, a
// failure at start).
Collector* collector() {
  std::call_once(g_start, [] {
    try {
      std::string warnings;
      auto config = argus::capture::shim::readShimConfig([](const char* name) { return std::getenv(name); }, &warnings);
      size_t start = 0;
      while (start < warnings.size()) {
        size_t end = warnings.find('\n', start);
        argus::capture::shim::shimLog(std::string_view(warnings).substr(start, end - start));
        start = end + 1;
      }
      if (!config.enabled) return;
      g_collector = new Collector(config);
      std::atexit(onExit);
      pthread_atfork(nullptr, nullptr, onForkChild);
    } catch (const std::exception& e) {
      argus::capture::shim::shimLog(std::string("capture failed to start: ") + e.what() + "; the job runs on untraced");
      g_collector = nullptr;
    }
  });
  return g_collector;
}

}  // namespace

// NVTX_INJECTION64_PATH: called on the first NVTX call of each NVTX instance (every shared
// object built with the nvtx3 headers). Returns 0 (NVTX stays a no-op) when the shim is off.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable) {
  Collector* c = collector();
  if (c == nullptr || c->quiet()) return 0;
  return argus::capture::nvtx::initializeInjection(getExportTable);
}

#ifdef ARGUS_SHIM_CUPTI
// CUDA_INJECTION64_PATH: called once while CUDA initializes. Returns 1 (CUDA ignores the
// value; the CUPTI samples return 1): a failure to trace the GPU never fails CUDA.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  Collector* c = collector();
  if (c != nullptr) c->startGpu();
  return 1;
}
#endif

// NCCL_PROFILER_PLUGIN: NCCL looks up ncclProfiler_v5 (2.28), then _v4 (2.27), and calls
// init once per communicator. An init failure (the shim off, or out of memory) makes NCCL
// run on without the profiler, paying nothing for it.
namespace {

namespace nccl = argus::capture::nccl;

nccl::abi::Result ncclInitV5(void** context, uint64_t comm_id, int* mask, const char* name, int nodes, int nranks, int rank,
                             nccl::abi::DebugLogger log) {
  Collector* c = collector();
  if (c == nullptr || c->quiet()) return nccl::abi::kInternalError;
  return nccl::profilerV5().init(context, comm_id, mask, name, nodes, nranks, rank, log);
}

nccl::abi::Result ncclInitV4(void** context, int* mask, const char* name, uint64_t comm_hash, int nodes, int nranks, int rank,
                             nccl::abi::DebugLogger log) {
  Collector* c = collector();
  if (c == nullptr || c->quiet()) return nccl::abi::kInternalError;
  return nccl::profilerV4().init(context, mask, name, comm_hash, nodes, nranks, rank, log);
}

nccl::abi::ProfilerV5 withShimInit(nccl::abi::ProfilerV5 t) {
  t.init = ncclInitV5;
  return t;
}
nccl::abi::ProfilerV4 withShimInit(nccl::abi::ProfilerV4 t) {
  t.init = ncclInitV4;
  return t;
}

}  // namespace

extern "C" {
__attribute__((visibility("default"))) nccl::abi::ProfilerV5 ncclProfiler_v5 = withShimInit(nccl::profilerV5());
__attribute__((visibility("default"))) nccl::abi::ProfilerV4 ncclProfiler_v4 = withShimInit(nccl::profilerV4());
}
