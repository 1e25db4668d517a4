// libargus_capture.so's definitions of three CUPTI functions, exported so that a preloaded
// shim (LD_PRELOAD, set by `argus capture`) takes these calls from every other library of
// the process, PyTorch's Kineto first of all, and routes them through the ActivityHandover:
// torch.profiler gets the Activity API while it traces, our source gets it back when it
// stops (docs/capture/cupti.md, "Coexisting with torch.profiler"). libcupti's own functions
// are found past us (RTLD_NEXT). Loaded only through CUDA_INJECTION64_PATH the shim sits
// after libcupti in the lookup order, and these are never called.
#include <dlfcn.h>

#include <cupti_activity.h>

#include "capture/cupti/activity_handover.h"

namespace {

using argus::capture::cupti::ActivityHandover;

const ActivityHandover::Calls& libcupti() {
  static const ActivityHandover::Calls calls = [] {
    ActivityHandover::Calls c;
    c.registerCallbacks = reinterpret_cast<decltype(c.registerCallbacks)>(dlsym(RTLD_NEXT, "cuptiActivityRegisterCallbacks"));
    c.enable = reinterpret_cast<decltype(c.enable)>(dlsym(RTLD_NEXT, "cuptiActivityEnable"));
    c.disable = reinterpret_cast<decltype(c.disable)>(dlsym(RTLD_NEXT, "cuptiActivityDisable"));
    return c;
  }();
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

}  // extern "C"
