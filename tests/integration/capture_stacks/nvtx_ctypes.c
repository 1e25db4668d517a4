/* NVTX for a Python program through ctypes, the way torch.cuda.nvtx reaches it: a shared
   object built against the toolkit's nvtx3 headers, so that its first call loads the
   injection library named by NVTX_INJECTION64_PATH (the capture shim). */
#include <nvtx3/nvToolsExt.h>

__attribute__((visibility("default"))) int argus_test_range_push(const char* name) {
  return nvtxRangePushA(name);
}

__attribute__((visibility("default"))) int argus_test_range_pop(void) {
  return nvtxRangePop();
}
