#include "capture/cupti/cupti_api.h"

#include <dlfcn.h>

#include <initializer_list>

namespace argus::capture::cupti {

namespace {

// Sonames newest first. A process that already holds one (PyTorch's Kineto links libcupti)
// must use that very copy: two CUPTIs in one process would fight over the same driver hooks.
constexpr const char* kSonames[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
constexpr const char* kToolkitDirs[] = {"/usr/local/cuda/lib64/", "/usr/local/cuda/extras/CUPTI/lib64/"};

template <typename Fn>
bool resolve(void* handle, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(handle, name));
  return *out != nullptr;
}

Status resolveAll(void* handle, CuptiApi* api) {
  struct Required {
    const char* name;
    bool ok;
  };
  const std::initializer_list<Required> required = {
      {"cuptiGetTimestamp", resolve(handle, "cuptiGetTimestamp", &api->getTimestamp)},
      {"cuptiActivityRegisterCallbacks", resolve(handle, "cuptiActivityRegisterCallbacks", &api->activityRegisterCallbacks)},
      {"cuptiActivityEnable", resolve(handle, "cuptiActivityEnable", &api->activityEnable)},
      {"cuptiActivityDisable", resolve(handle, "cuptiActivityDisable", &api->activityDisable)},
      {"cuptiActivityGetNextRecord", resolve(handle, "cuptiActivityGetNextRecord", &api->activityGetNextRecord)},
      {"cuptiActivityFlushAll", resolve(handle, "cuptiActivityFlushAll", &api->activityFlushAll)},
      {"cuptiActivityGetNumDroppedRecords", resolve(handle, "cuptiActivityGetNumDroppedRecords", &api->activityGetNumDroppedRecords)},
      {"cuptiActivityPushExternalCorrelationId",
       resolve(handle, "cuptiActivityPushExternalCorrelationId", &api->activityPushExternalCorrelationId)},
      {"cuptiActivityPopExternalCorrelationId",
       resolve(handle, "cuptiActivityPopExternalCorrelationId", &api->activityPopExternalCorrelationId)},
  };
  resolve(handle, "cuptiGetVersion", &api->getVersion);
  resolve(handle, "cuptiGetResultString", &api->getResultString);
  resolve(handle, "cuptiActivityEnableDriverApi", &api->activityEnableDriverApi);
  resolve(handle, "cuptiActivityEnableRuntimeApi", &api->activityEnableRuntimeApi);
  resolve(handle, "cuptiGetCallbackName", &api->getCallbackName);
  for (const Required& r : required) {
    if (!r.ok) {
      *api = CuptiApi{};
      return Status::unavailable(std::string("libcupti lacks ") + r.name);
    }
  }
  return Status::ok();
}

// Appends "path (dlerror)" to *tried when the load fails (a failed RTLD_NOLOAD probe only
// clears dlerror: "not loaded yet" is no failure).
void* tryOpen(const std::string& path, int flags, std::string* tried) {
  void* handle = dlopen(path.c_str(), flags);
  if (handle == nullptr) {
    const char* err = dlerror();
    if ((flags & RTLD_NOLOAD) == 0) *tried += (tried->empty() ? "" : "; ") + path + " (" + (err ? err : "not found") + ")";
  }
  return handle;
}

}  // namespace

void* loadedCupti(const char** soname) {
  std::string unused;  // a failed RTLD_NOLOAD probe records nothing
  for (const char* name : kSonames) {
    if (void* handle = tryOpen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD, &unused)) {
      if (soname != nullptr) *soname = name;
      return handle;
    }
  }
  return nullptr;
}

Status loadCuptiApi(const LoadOptions& options, CuptiApi* api) {
  *api = CuptiApi{};
  std::string tried;
  void* handle = nullptr;
  std::string loaded;
  if (!options.override_path.empty()) {
    handle = tryOpen(options.override_path, RTLD_NOW | RTLD_LOCAL, &tried);
    loaded = options.override_path;
  } else {
    const char* in_process = nullptr;
    if ((handle = loadedCupti(&in_process)) != nullptr) loaded = in_process;
    for (const char* soname : kSonames) {
      if (handle != nullptr) break;
      if ((handle = tryOpen(soname, RTLD_NOW | RTLD_LOCAL, &tried)) != nullptr) loaded = soname;
      for (const char* dir : kToolkitDirs) {
        if (handle != nullptr) break;
        std::string path = std::string(dir) + soname;
        if ((handle = tryOpen(path, RTLD_NOW | RTLD_LOCAL, &tried)) != nullptr) loaded = path;
      }
    }
  }
  if (handle == nullptr) return Status::unavailable("cannot load libcupti: " + tried);
  // Never dlclose: CUPTI's worker thread and our registered callbacks outlive this call.
  Status s = resolveAll(handle, api);
  if (!s) return s.withContext(loaded);
  api->library = loaded;
  return Status::ok();
}

namespace {

const char* ourResultName(CUptiResult r) {
  switch (r) {
    case CUPTI_SUCCESS: return "CUPTI_SUCCESS";
    case CUPTI_ERROR_INVALID_PARAMETER: return "CUPTI_ERROR_INVALID_PARAMETER";
    case CUPTI_ERROR_INVALID_OPERATION: return "CUPTI_ERROR_INVALID_OPERATION";
    case CUPTI_ERROR_OUT_OF_MEMORY: return "CUPTI_ERROR_OUT_OF_MEMORY";
    case CUPTI_ERROR_MAX_LIMIT_REACHED: return "CUPTI_ERROR_MAX_LIMIT_REACHED";
    case CUPTI_ERROR_NOT_INITIALIZED: return "CUPTI_ERROR_NOT_INITIALIZED";
    case CUPTI_ERROR_QUEUE_EMPTY: return "CUPTI_ERROR_QUEUE_EMPTY";
    case CUPTI_ERROR_INVALID_KIND: return "CUPTI_ERROR_INVALID_KIND";
    case CUPTI_ERROR_NOT_SUPPORTED: return "CUPTI_ERROR_NOT_SUPPORTED";
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: return "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: return "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED: return "CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED";
    case CUPTI_ERROR_UNKNOWN: return "CUPTI_ERROR_UNKNOWN";
    default: return "CUPTI error";
  }
}

}  // namespace

std::string cuptiResultText(const CuptiApi& api, CUptiResult result) {
  const char* text = nullptr;
  if (api.getResultString != nullptr && api.getResultString(result, &text) != CUPTI_SUCCESS) text = nullptr;
  if (text == nullptr || *text == '\0') text = ourResultName(result);
  return std::string(text) + " (" + std::to_string(static_cast<int>(result)) + ")";
}

Status cuptiStatus(const CuptiApi& api, CUptiResult result, std::string_view call) {
  if (result == CUPTI_SUCCESS) return Status::ok();
  std::string message = std::string(call) + ": " + cuptiResultText(api, result);
  if (result == CUPTI_ERROR_UNKNOWN) message += " (no usable NVIDIA driver or GPU?)";
  return Status::unavailable(message);
}

}  // namespace argus::capture::cupti
