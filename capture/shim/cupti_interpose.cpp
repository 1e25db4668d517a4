// libargus_capture.so's definitions of four CUPTI functions, exported so that a preloaded
// shim (LD_PRELOAD, set by `argus capture`) takes these calls from every other library of
// the process, PyTorch's Kineto first of all, and routes them through the ActivityHandover:
// torch.profiler gets the Activity API while it traces, our source gets it back when it
// stops (docs/capture/cupti.md, "Coexisting with torch.profiler"). Loaded only through
// CUDA_INJECTION64_PATH the shim sits after libcupti in the lookup order, and these are
// never called.
#include <dlfcn.h>

#include <cupti_activity.h>

#include <atomic>
#include <mutex>

#include "capture/cupti/activity_handover.h"
#include "capture/cupti/cupti_api.h"

namespace {

using argus::capture::cupti::ActivityHandover;

// libcupti's own functions: past the shim in the global scope (RTLD_NEXT) when libcupti is
// there, else in the libcupti the process loaded. PyTorch's is not global: Python loads
// extension modules, and so their libcupti, with RTLD_LOCAL, out of RTLD_NEXT's reach
// (an H200 run found Kineto's calls failing through us that way). Resolved until found:
// a call can come before libcupti is loaded only from a program that never loads it.
ActivityHandover::Calls libcupti() {
  static std::mutex mu;
  static ActivityHandover::Calls calls;
  static std::atomic<bool> resolved{false};
  if (resolved.load(std::memory_order_acquire)) return calls;
  std::lock_guard<std::mutex> lock(mu);
  if (resolved.load(std::memory_order_relaxed)) return calls;
  void* lib = nullptr;
  auto find = [&lib](const char* name) -> void* {
    if (void* f = dlsym(RTLD_NEXT, name)) return f;
    if (lib == nullptr) lib = argus::capture::cupti::loadedCupti();
    return lib != nullptr ? dlsym(lib, name) : nullptr;
  };
  calls.registerCallbacks = reinterpret_cast<decltype(calls.registerCallbacks)>(find("cuptiActivityRegisterCallbacks"));
  calls.enable = reinterpret_cast<decltype(calls.enable)>(find("cuptiActivityEnable"));
  calls.disable = reinterpret_cast<decltype(calls.disable)>(find("cuptiActivityDisable"));
  calls.registerTimestamp = reinterpret_cast<decltype(calls.registerTimestamp)>(find("cuptiActivityRegisterTimestampCallback"));
  // (cuptiActivityRegisterTimestampCallback is newer, CUPTI 11.6: not required)
  resolved.store(calls.registerCallbacks != nullptr && calls.enable != nullptr && calls.disable != nullptr, std::memory_order_release);
  return calls;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                                                            CUpti_BuffersCallbackCompleteFunc complete) {
  return ActivityHandover::instance().guestRegister(libcupti(), request, complete);
}

__attribute__((visibility("default"))) CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  return ActivityHandover::instance().guestEnable(libcupti(), kind);
}

__attribute__((visibility("default"))) CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  return ActivityHandover::instance().guestDisable(libcupti(), kind);
}

__attribute__((visibility("default"))) CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc ticks) {
  return ActivityHandover::instance().guestTimestampCallback(libcupti(), ticks);
}

}  // extern "C"
