// PythonRuntime: finding the CPython interpreter inside this process, for the stack sampler
// (docs/capture/stacks.md, "Finding the interpreter").
//
// The shim is loaded before or after Python starts (NVTX's and CUDA's hooks run whenever the
// job first calls them), so the sampler thread calls findPython() lazily until it answers
// kFound: `_PyRuntime`, `PyCode_Type`, `PyUnicode_Type` (and `PyFrame_Type` on 3.10) come
// from dlsym(RTLD_DEFAULT) (the python executable exports them, or libpython does); the
// version from `Py_Version` (3.11+) or the text of `Py_GetVersion()` (3.10); the layout from
// `_PyRuntime.debug_offsets` (3.13) or the built-in table (PythonLayout). Nothing here takes
// the GIL or calls into the interpreter except Py_GetVersion, which only formats constants.
#pragma once

#include <cstdint>
#include <string>

#include "capture/stacks/memory_reader.h"
#include "capture/stacks/python_layout.h"

namespace argus::capture::stacks {

struct PythonRuntime {
  uint64_t runtime = 0;       // &_PyRuntime
  uint64_t code_type = 0;     // &PyCode_Type: a frame's code object must have this type
  uint64_t unicode_type = 0;  // &PyUnicode_Type
  uint64_t frame_type = 0;    // &PyFrame_Type (3.10 frames are objects)
  PythonLayout layout;
  // 3.10: where glibc's struct pthread keeps the kernel tid (PyThreadState has only the
  // pthread_t); -1 when not needed or not found (threads then carry tid 0).
  int32_t pthread_tid_offset = -1;
};

enum class FindResult : uint8_t {
  kFound,
  kNotYet,       // no interpreter in the process (yet), or not initialized: ask again later
  kUnsupported,  // an interpreter the sampler cannot read (version, build): *why says which
};

// Looks for the interpreter. Thread-safe, no allocation beyond *why.
FindResult findPython(MemoryReader& reader, PythonRuntime* out, std::string* why);

// The offset of the kernel tid in glibc's thread descriptor (pthread_t points at it): the
// 4-byte-aligned offset where both this thread's and a helper thread's descriptors hold
// their gettid(). -1 when there is no single such offset.
int32_t findPthreadTidOffset(MemoryReader& reader);

}  // namespace argus::capture::stacks
