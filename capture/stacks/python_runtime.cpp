#include "capture/stacks/python_runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <vector>

namespace argus::capture::stacks {
namespace {

uint64_t symbol(const char* name) {
  return reinterpret_cast<uintptr_t>(::dlsym(RTLD_DEFAULT, name));
}

// Candidate tid offsets in the calling thread's descriptor (its first KiB, as far as it
// reads: a new thread's descriptor sits at the very top of its stack mapping).
std::vector<int32_t> tidOffsetsOfThisThread(MemoryReader& reader) {
  constexpr size_t kScanBytes = 1024, kChunk = 64;
  std::vector<int32_t> found;
  uint8_t bytes[kScanBytes];
  const int32_t tid = static_cast<int32_t>(::gettid());
  const uint64_t self = static_cast<uint64_t>(::pthread_self());
  size_t have = 0;
  while (have < kScanBytes && reader.read(self + have, bytes + have, kChunk)) have += kChunk;
  for (size_t off = 0; off + 4 <= have; off += 4) {
    int32_t v;
    std::memcpy(&v, bytes + off, 4);
    if (v == tid) found.push_back(static_cast<int32_t>(off));
  }
  return found;
}

}  // namespace

int32_t findPthreadTidOffset(MemoryReader& reader) {
  std::vector<int32_t> mine = tidOffsetsOfThisThread(reader), other;
  std::thread helper([&] { other = tidOffsetsOfThisThread(reader); });
  helper.join();
  int32_t offset = -1;
  for (int32_t a : mine) {
    for (int32_t b : other) {
      if (a != b) continue;
      if (offset >= 0) return -1;  // ambiguous
      offset = a;
    }
  }
  return offset;
}

FindResult findPython(MemoryReader& reader, PythonRuntime* out, std::string* why) {
  PythonRuntime rt;
  rt.runtime = symbol("_PyRuntime");
  if (rt.runtime == 0) return FindResult::kNotYet;
  rt.code_type = symbol("PyCode_Type");
  rt.unicode_type = symbol("PyUnicode_Type");
  rt.frame_type = symbol("PyFrame_Type");
  if (rt.code_type == 0 || rt.unicode_type == 0) {
    *why = "_PyRuntime found without PyCode_Type / PyUnicode_Type";
    return FindResult::kUnsupported;
  }
  int major = 0, minor = 0;
  uint64_t version_addr = symbol("Py_Version");  // const unsigned long (PY_VERSION_HEX), 3.11+
  uint64_t hex = 0;
  if (version_addr != 0 && reader.readValue(version_addr, &hex)) {
    if (!parseVersionHex(static_cast<uint32_t>(hex), &major, &minor)) {
      *why = "Py_Version is not a Python 3 version";
      return FindResult::kUnsupported;
    }
  } else {
    using VersionFn = const char* (*)();
    auto fn = reinterpret_cast<VersionFn>(::dlsym(RTLD_DEFAULT, "Py_GetVersion"));
    if (fn == nullptr || !parseVersionText(fn(), &major, &minor)) {
      *why = "cannot tell the Python version (no Py_Version, no readable Py_GetVersion)";
      return FindResult::kUnsupported;
    }
  }
  const PythonLayout* builtin = builtinLayout(major, minor);
  if (builtin == nullptr) {
    *why = "Python " + std::to_string(major) + "." + std::to_string(minor) + " is not supported (3.10-3.13 are)";
    return FindResult::kUnsupported;
  }
  rt.layout = *builtin;
  if (major == 3 && minor >= 13) {
    uint8_t bytes[kDebugOffsetsBytes];
    std::string reason;
    if (!reader.read(rt.runtime, bytes, sizeof bytes)) return FindResult::kNotYet;
    if (!layoutFromDebugOffsets(bytes, &rt.layout, &reason)) {
      *why = "Python 3.13 " + reason;
      return FindResult::kUnsupported;
    }
  }
  if (rt.layout.frame_is_object && rt.frame_type == 0) {
    *why = "Python 3.10 without PyFrame_Type";
    return FindResult::kUnsupported;
  }
  uint64_t head = 0;
  if (!reader.readValue(rt.runtime + rt.layout.runtime_interpreters_head, &head) || head == 0) {
    return FindResult::kNotYet;  // _PyRuntime exists, the main interpreter does not yet
  }
  if (rt.layout.tstate_native_thread_id < 0) rt.pthread_tid_offset = findPthreadTidOffset(reader);
  *out = rt;
  return FindResult::kFound;
}

}  // namespace argus::capture::stacks
