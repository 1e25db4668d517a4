// CuptiApi: the CUPTI functions the activity source calls, resolved at run time from
// libcupti (dlopen), so the capture shim has no link-time dependency on CUDA and loads on
// machines without a GPU, a driver or a toolkit (docs/capture/cupti.md).
//
// The part compiles against the toolkit's CUPTI headers (the build finds them as
// ARGUS_CUPTI_INCLUDE; without them this part is not built): record layouts, kinds and
// callback ids come from the headers, never from our own copies.
//
// Every call whose failure matters goes through ARGUS_CUPTI_CALL, which turns a result
// code into a Status naming the call and CUPTI's error string.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace argus::capture::cupti {

// Pointers into the loaded libcupti. Required entries are non-null after a successful
// loadCuptiApi(); optional ones (marked) may be null on older libraries.
struct CuptiApi {
  CUptiResult(CUPTIAPI* getVersion)(uint32_t*) = nullptr;                          // optional
  CUptiResult(CUPTIAPI* getResultString)(CUptiResult, const char**) = nullptr;     // optional
  CUptiResult(CUPTIAPI* getTimestamp)(uint64_t*) = nullptr;
  CUptiResult(CUPTIAPI* activityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult(CUPTIAPI* activityEnable)(CUpti_ActivityKind) = nullptr;
  CUptiResult(CUPTIAPI* activityDisable)(CUpti_ActivityKind) = nullptr;
  CUptiResult(CUPTIAPI* activityGetNextRecord)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  CUptiResult(CUPTIAPI* activityFlushAll)(uint32_t) = nullptr;
  CUptiResult(CUPTIAPI* activityGetNumDroppedRecords)(CUcontext, uint32_t, size_t*) = nullptr;
  CUptiResult(CUPTIAPI* activityPushExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t) = nullptr;
  CUptiResult(CUPTIAPI* activityPopExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t*) = nullptr;
  // Per-API selection of driver / runtime API records (CUPTI 12.x and later).
  CUptiResult(CUPTIAPI* activityEnableDriverApi)(CUpti_CallbackId, uint8_t) = nullptr;   // optional
  CUptiResult(CUPTIAPI* activityEnableRuntimeApi)(CUpti_CallbackId, uint8_t) = nullptr;  // optional
  CUptiResult(CUPTIAPI* getCallbackName)(CUpti_CallbackDomain, uint32_t, const char**) = nullptr;  // optional

  std::string library;  // the path or soname that loaded
  bool loaded() const { return getTimestamp != nullptr; }
};

struct LoadOptions {
  // When non-empty, the one library tried (the shim maps its own option onto it).
  std::string override_path;
};

// Loads libcupti: the override path when given (and only it: a wrong override is an
// error, not a silent fallback), else libcupti.so.13, libcupti.so.12, libcupti.so on the
// loader's search path and then under /usr/local/cuda. Returns Unavailable naming every
// path tried and dlerror() when none loads, or the first required symbol missing.
// The library is never unloaded: CUPTI keeps threads and callbacks into it.
Status loadCuptiApi(const LoadOptions& options, CuptiApi* api);

// A handle to the libcupti already in the process (libcupti.so.13, .12, libcupti.so, by
// soname; *soname, when given, says which), or null: also one loaded into a local scope,
// as Python loads PyTorch's. Never loads one.
void* loadedCupti(const char** soname = nullptr);

// "CUPTI_ERROR_UNKNOWN (999)": CUPTI's name for the code when the library gives one (it
// gives none before it has initialized), else ours for the codes we expect.
std::string cuptiResultText(const CuptiApi& api, CUptiResult result);

// Ok for CUPTI_SUCCESS; else Unavailable("<call>: <cuptiResultText>"), with a hint for
// CUPTI_ERROR_UNKNOWN, which is what every activity call returns without a driver.
Status cuptiStatus(const CuptiApi& api, CUptiResult result, std::string_view call);

}  // namespace argus::capture::cupti

// ARGUS_CUPTI_CALL(api, activityEnable(CUPTI_ACTIVITY_KIND_MEMCPY)) -> Status naming the
// call as written. REQUIRES: the entry is non-null (required, or checked by the caller).
#define ARGUS_CUPTI_CALL(api, call) ::argus::capture::cupti::cuptiStatus((api), (api).call, #call)
