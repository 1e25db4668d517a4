#include "capture/stacks/python_layout.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace argus::capture::stacks {
namespace {

static_assert(sizeof(void*) == 8, "the layouts are those of 64-bit (LP64) builds");

// Offsets for 64-bit Linux builds (LP64), default (GIL) builds. Each number was read from
// the CPython sources of the version named (python/cpython, the files below) and checked
// with offsetof() against the installed headers of 3.10.13, 3.11.2, 3.11.7, 3.12.1 and
// 3.13.0 (docs/capture/stacks.md, "Versions and layouts", has the check program).
//   _PyRuntimeState       Include/internal/pycore_runtime.h
//   PyInterpreterState    Include/internal/pycore_interp.h (struct _is)
//   PyThreadState         Include/cpython/pystate.h (struct _ts; _PyCFrame in 3.11/3.12)
//   PyFrameObject         Include/cpython/frameobject.h (3.10)
//   _PyInterpreterFrame   Include/internal/pycore_frame.h (3.11+)
//   PyCodeObject          Include/cpython/code.h
//   PyASCIIObject ...     Include/cpython/unicodeobject.h
PythonLayout make310() {
  PythonLayout l;
  l.major = 3, l.minor = 10, l.source = "built-in table (3.10)";
  l.runtime_interpreters_head = 32;
  l.interp_next = 0, l.interp_threads_head = 8;  // tstate_head
  l.tstate_next = 8, l.tstate_interp = 16, l.tstate_frame = 24;
  l.tstate_thread_id = 176;  // no native_thread_id before 3.11
  l.frame_is_object = true, l.frame_previous = 24, l.frame_code = 32;  // f_back, f_code
  l.code_filename = 104, l.code_name = 112, l.code_firstlineno = 40;
  l.ascii_header_bytes = 48, l.compact_header_bytes = 72;  // wstr, wstr_length still there
  return l;
}

PythonLayout make311() {
  PythonLayout l;
  l.major = 3, l.minor = 11, l.source = "built-in table (3.11)";
  l.runtime_interpreters_head = 40;
  l.interp_next = 0, l.interp_threads_head = 16;
  l.tstate_next = 8, l.tstate_interp = 16, l.tstate_frame = 56, l.cframe_current_frame = 8;
  l.tstate_thread_id = 152, l.tstate_native_thread_id = 160;
  l.frame_previous = 48, l.frame_code = 32, l.frame_owner = 69;  // no C-stack-owned frames yet
  l.code_filename = 112, l.code_name = 120, l.code_qualname = 128, l.code_firstlineno = 72;
  l.ascii_header_bytes = 48, l.compact_header_bytes = 72;
  return l;
}

PythonLayout make312() {
  PythonLayout l;
  l.major = 3, l.minor = 12, l.source = "built-in table (3.12)";
  l.runtime_interpreters_head = 40;
  l.interp_next = 0, l.interp_threads_head = 72;
  l.tstate_next = 8, l.tstate_interp = 16, l.tstate_frame = 56, l.cframe_current_frame = 0;
  l.tstate_thread_id = 136, l.tstate_native_thread_id = 144;
  l.frame_previous = 8, l.frame_code = 0, l.frame_owner = 70, l.frame_owner_cstack = 3;
  l.code_filename = 112, l.code_name = 120, l.code_qualname = 128, l.code_firstlineno = 68;
  l.ascii_header_bytes = 40, l.compact_header_bytes = 56;  // wstr gone (PEP 623)
  return l;
}

// 3.13 without its debug offsets (they are preferred; this entry also checks them).
PythonLayout make313() {
  PythonLayout l;
  l.major = 3, l.minor = 13, l.source = "built-in table (3.13)";
  l.runtime_interpreters_head = 632;
  l.interp_next = 7264, l.interp_threads_head = 7344;
  l.tstate_next = 8, l.tstate_interp = 16, l.tstate_frame = 72;  // current_frame: _PyCFrame is gone
  l.tstate_thread_id = 152, l.tstate_native_thread_id = 160;
  l.frame_previous = 8, l.frame_code = 0, l.frame_owner = 70, l.frame_owner_cstack = 3;  // f_executable
  l.code_filename = 112, l.code_name = 120, l.code_qualname = 128, l.code_firstlineno = 68;
  l.ascii_header_bytes = 40, l.compact_header_bytes = 56;
  return l;
}

const PythonLayout kLayouts[] = {make310(), make311(), make312(), make313()};

uint64_t u64At(std::span<const uint8_t> bytes, size_t off) {
  uint64_t v;
  std::memcpy(&v, bytes.data() + off, sizeof v);
  return v;
}

}  // namespace

uint32_t PythonLayout::frameWindowEnd() const {
  uint32_t end = std::max(frame_previous, frame_code) + 8;
  if (frame_owner >= 0) end = std::max<uint32_t>(end, static_cast<uint32_t>(frame_owner) + 1);
  if (frame_is_object) end = std::max(end, ob_type + 8);
  return end;
}

uint32_t PythonLayout::codeWindowEnd() const {
  uint32_t end = std::max({code_filename + 8, code_name + 8, code_firstlineno + 4, ob_type + 8});
  if (code_qualname >= 0) end = std::max<uint32_t>(end, static_cast<uint32_t>(code_qualname) + 8);
  return end;
}

const PythonLayout* builtinLayout(int major, int minor) {
  for (const PythonLayout& l : kLayouts) {
    if (l.major == major && l.minor == minor) return &l;
  }
  return nullptr;
}

bool layoutFromDebugOffsets(std::span<const uint8_t> bytes, PythonLayout* out, std::string* why) {
  if (bytes.size() < kDebugOffsetsBytes) {
    *why = "debug offsets truncated";
    return false;
  }
  if (std::memcmp(bytes.data(), "xdebugpy", 8) != 0) {
    *why = "no debug offsets cookie (\"xdebugpy\")";
    return false;
  }
  // _Py_DebugOffsets of 3.13 (Include/internal/pycore_runtime.h, v3.13.0): a cookie, the
  // version (PY_VERSION_HEX), free_threaded, then groups of uint64 offsets, each group
  // led by its struct's size. Its own layout is stable only within a minor version.
  int major = 0, minor = 0;
  if (!parseVersionHex(static_cast<uint32_t>(u64At(bytes, 8)), &major, &minor) || major != 3 || minor != 13) {
    *why = "debug offsets of an unsupported version";
    return false;
  }
  if (u64At(bytes, 16) != 0) {
    *why = "free-threaded build (not supported)";
    return false;
  }
  PythonLayout l = *builtinLayout(3, 13);
  l.source = "_PyRuntime.debug_offsets (3.13)";
  uint64_t v[] = {
      u64At(bytes, 40),   // runtime_state.interpreters_head
      u64At(bytes, 64),   // interpreter_state.next
      u64At(bytes, 72),   // interpreter_state.threads_head
      u64At(bytes, 168),  // thread_state.next
      u64At(bytes, 176),  // thread_state.interp
      u64At(bytes, 184),  // thread_state.current_frame
      u64At(bytes, 192),  // thread_state.thread_id
      u64At(bytes, 200),  // thread_state.native_thread_id
      u64At(bytes, 232),  // interpreter_frame.previous
      u64At(bytes, 240),  // interpreter_frame.executable
      u64At(bytes, 264),  // interpreter_frame.owner
      u64At(bytes, 280),  // code_object.filename
      u64At(bytes, 288),  // code_object.name
      u64At(bytes, 296),  // code_object.qualname
      u64At(bytes, 312),  // code_object.firstlineno
      u64At(bytes, 360),  // pyobject.ob_type
      u64At(bytes, 544),  // unicode_object.state
      u64At(bytes, 552),  // unicode_object.length
      u64At(bytes, 560),  // unicode_object.asciiobject_size
  };
  // Each is an offset into one of CPython's structs: garbage (a wrong cookie match, a
  // corrupted runtime) shows as values far past any of them (the largest used, the
  // interpreter's thread list, is ~7 KiB into it in 3.13.0).
  for (uint64_t x : v) {
    if (x >= (1u << 20)) {
      *why = "implausible debug offsets";
      return false;
    }
  }
  auto u = [](uint64_t x) { return static_cast<uint32_t>(x); };
  auto s = [](uint64_t x) { return static_cast<int32_t>(x); };
  l.runtime_interpreters_head = u(v[0]);
  l.interp_next = u(v[1]), l.interp_threads_head = u(v[2]);
  l.tstate_next = u(v[3]), l.tstate_interp = u(v[4]), l.tstate_frame = u(v[5]);
  l.tstate_thread_id = u(v[6]), l.tstate_native_thread_id = s(v[7]);
  l.frame_previous = u(v[8]), l.frame_code = u(v[9]), l.frame_owner = s(v[10]);
  l.code_filename = u(v[11]), l.code_name = u(v[12]), l.code_qualname = s(v[13]), l.code_firstlineno = u(v[14]);
  l.ob_type = u(v[15]);
  l.unicode_state = u(v[16]), l.unicode_length = u(v[17]);
  l.ascii_header_bytes = u(v[18]);
  l.compact_header_bytes = l.ascii_header_bytes + 16;  // + utf8_length, utf8 (no wstr since 3.12)
  *out = l;
  return true;
}

bool parseVersionHex(uint32_t hex, int* major, int* minor) {
  int ma = static_cast<int>(hex >> 24), mi = static_cast<int>((hex >> 16) & 0xff);
  if (ma != 3 || mi > 99) return false;
  *major = ma, *minor = mi;
  return true;
}

bool parseVersionText(const char* text, int* major, int* minor) {
  if (text == nullptr) return false;
  char* end = nullptr;
  long ma = std::strtol(text, &end, 10);
  if (end == text || *end != '.') return false;
  const char* rest = end + 1;
  long mi = std::strtol(rest, &end, 10);
  if (end == rest || ma != 3 || mi < 0 || mi > 99) return false;
  *major = static_cast<int>(ma), *minor = static_cast<int>(mi);
  return true;
}

}  // namespace argus::capture::stacks
