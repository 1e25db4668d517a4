// Stands in for PyTorch's Kineto: a library linked against libcupti that calls the four
// Activity API functions a preloaded shim takes over (capture/shim/cupti_interpose.cpp).
#include <cupti_activity.h>

#include <cstdint>
#include <cstdlib>

namespace {

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;
}

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t*, size_t, size_t) {}

uint64_t CUPTIAPI ticks() { return 1; }

}  // namespace

extern "C" __attribute__((visibility("default"))) int clientRegister() {
  return cuptiActivityRegisterCallbacks(&requested, &completed);
}
extern "C" __attribute__((visibility("default"))) int clientEnable(int kind) {
  return cuptiActivityEnable(static_cast<CUpti_ActivityKind>(kind));
}
extern "C" __attribute__((visibility("default"))) int clientDisable(int kind) {
  return cuptiActivityDisable(static_cast<CUpti_ActivityKind>(kind));
}
extern "C" __attribute__((visibility("default"))) int clientTimestamp() {
  return cuptiActivityRegisterTimestampCallback(&ticks);
}
