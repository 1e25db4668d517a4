// PythonLayout: where CPython keeps what the stack sampler reads, per interpreter version
// (docs/capture/stacks.md, "Versions and layouts"). The shim never includes Python's
// headers: the offsets are declared here, one table entry per minor version, and 3.13+
// publishes its own in `_PyRuntime.debug_offsets`, which wins when present.
//
// The walk the offsets serve (PythonWalker):
//   _PyRuntime.interpreters.head -> PyInterpreterState (-> next)
//     .threads.head (3.11+) / .tstate_head (3.10) -> PyThreadState (-> next)
//       frame: 3.10 tstate->frame (PyFrameObject, f_back); 3.11/3.12 tstate->cframe->
//       current_frame; 3.13 tstate->current_frame (_PyInterpreterFrame, previous)
//         code: frame->f_code (3.10-3.12) / f_executable (3.13) -> PyCodeObject
//           co_qualname (3.11+; co_name on 3.10), co_filename, co_firstlineno
//       OS thread id: tstate->native_thread_id (3.11+); 3.10 has only thread_id (pthread_t)
// Strings are PEP 393 compact unicode objects: ASCII data right after PyASCIIObject,
// other kinds after PyCompactUnicodeObject.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace argus::capture::stacks {

inline constexpr int32_t kAbsent = -1;  // an offset the version does not have

struct PythonLayout {
  int major = 0, minor = 0;
  const char* source = "";  // where the numbers come from (table entry or debug_offsets)

  // _PyRuntimeState
  uint32_t runtime_interpreters_head = 0;
  // PyInterpreterState
  uint32_t interp_next = 0;
  uint32_t interp_threads_head = 0;
  // PyThreadState
  uint32_t tstate_next = 0;
  uint32_t tstate_interp = 0;
  uint32_t tstate_frame = 0;            // the frame pointer, or (cframe_current_frame >= 0) the _PyCFrame*
  int32_t cframe_current_frame = kAbsent;  // _PyCFrame.current_frame (3.11, 3.12)
  int32_t tstate_native_thread_id = kAbsent;  // 3.11+
  uint32_t tstate_thread_id = 0;        // pthread_t (3.10: the only thread identity)
  // Frames: PyFrameObject (3.10, frame_is_object) or _PyInterpreterFrame (3.11+).
  bool frame_is_object = false;
  uint32_t frame_previous = 0;
  uint32_t frame_code = 0;
  int32_t frame_owner = kAbsent;        // char; frames owned by the C stack are skipped
  int32_t frame_owner_cstack = kAbsent; // FRAME_OWNED_BY_CSTACK (3.12+)
  // PyCodeObject
  uint32_t code_filename = 0;
  uint32_t code_name = 0;
  int32_t code_qualname = kAbsent;      // 3.11+
  uint32_t code_firstlineno = 0;        // int
  // PyObject
  uint32_t ob_type = 8;
  // Unicode (PEP 393): PyASCIIObject.length / .state, the two header sizes, state bits.
  uint32_t unicode_length = 16;
  uint32_t unicode_state = 32;
  uint32_t ascii_header_bytes = 0;      // sizeof(PyASCIIObject): ASCII data follows
  uint32_t compact_header_bytes = 0;    // sizeof(PyCompactUnicodeObject): other kinds' data
  uint32_t state_kind_shift = 2;        // kind:3 after interned:2
  uint32_t state_compact_bit = 5;
  uint32_t state_ascii_bit = 6;

  // Bytes of a frame / code object the walker reads at once (a window over every field).
  uint32_t frameWindowEnd() const;
  uint32_t codeWindowEnd() const;
};

// The built-in entry for Python major.minor, or nullptr when the version is not supported
// (before 3.10, after 3.13).
const PythonLayout* builtinLayout(int major, int minor);

// 3.13's `_Py_DebugOffsets` (the first member of _PyRuntime): the offsets CPython publishes
// for out-of-process debuggers. `bytes` is the start of _PyRuntime (at least
// kDebugOffsetsBytes). Fills *out from them (unicode state bits from the built-in entry) and
// returns true; false with *why for a missing cookie, another minor version (the struct
// changes between minor versions), a free-threaded build, or implausible values.
inline constexpr size_t kDebugOffsetsBytes = 584;  // sizeof(_Py_DebugOffsets), 3.13
bool layoutFromDebugOffsets(std::span<const uint8_t> bytes, PythonLayout* out, std::string* why);

// "3.11.7" from PY_VERSION_HEX-style 0xMMmmpp.. (Py_Version), or the leading "3.10.13" of
// Py_GetVersion()'s text. Return false on anything else.
bool parseVersionHex(uint32_t hex, int* major, int* minor);
bool parseVersionText(const char* text, int* major, int* minor);

}  // namespace argus::capture::stacks
