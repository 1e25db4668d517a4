// Loads argv[1] (cupti_client.cpp's library, which needs libcupti) with RTLD_LOCAL, as Python
// loads PyTorch, so that libcupti lands outside the global scope, then prints where the global
// cuptiActivityEnable lives (the preloaded shim) and, for each of the four functions the shim
// takes over, the client's result (through the shim) next to libcupti's own (called directly).
// Exit codes: 0 printed, 2 a library or symbol missing.
#include <cupti_activity.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <initializer_list>

namespace {

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;
}

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t*, size_t, size_t) {}

uint64_t CUPTIAPI ticks() { return 1; }

template <class Fn>
Fn symbol(void* handle, const char* name) {
  Fn f = reinterpret_cast<Fn>(dlsym(handle, name));
  if (f == nullptr) std::fprintf(stderr, "probe: no %s\n", name);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  void* client = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (client == nullptr) {
    std::fprintf(stderr, "probe: %s\n", dlerror());
    return 2;
  }
  void* cupti = nullptr;
  for (const char* soname : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"}) {
    if (cupti == nullptr) cupti = dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  }
  if (cupti == nullptr) {
    std::fprintf(stderr, "probe: libcupti not loaded with the client\n");
    return 2;
  }
  auto client_register = symbol<int (*)()>(client, "clientRegister");
  auto client_enable = symbol<int (*)(int)>(client, "clientEnable");
  auto client_disable = symbol<int (*)(int)>(client, "clientDisable");
  auto client_timestamp = symbol<int (*)()>(client, "clientTimestamp");
  auto own_register = symbol<CUptiResult (*)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc)>(
      cupti, "cuptiActivityRegisterCallbacks");
  auto own_enable = symbol<CUptiResult (*)(CUpti_ActivityKind)>(cupti, "cuptiActivityEnable");
  auto own_disable = symbol<CUptiResult (*)(CUpti_ActivityKind)>(cupti, "cuptiActivityDisable");
  auto own_timestamp = symbol<CUptiResult (*)(CUpti_TimestampCallbackFunc)>(cupti, "cuptiActivityRegisterTimestampCallback");
  if (!client_register || !client_enable || !client_disable || !client_timestamp || !own_register || !own_enable || !own_disable ||
      !own_timestamp) {
    return 2;
  }

  Dl_info info{};
  void* global = dlsym(RTLD_DEFAULT, "cuptiActivityEnable");
  std::printf("global %s\n", global != nullptr && dladdr(global, &info) != 0 && info.dli_fname ? info.dli_fname : "none");
  std::printf("register %d %d\n", client_register(), own_register(&requested, &completed));
  std::printf("enable %d %d\n", client_enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), own_enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  std::printf("disable %d %d\n", client_disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), own_disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  std::printf("timestamp %d %d\n", client_timestamp(), own_timestamp(&ticks));
  return 0;
}
