// PythonLayout: the version table and 3.13's debug offsets.
#include "capture/stacks/python_layout.h"

#include <doctest/doctest.h>

#include <cstring>
#include <vector>

using namespace argus::capture::stacks;

TEST_CASE("builtinLayout covers CPython 3.10-3.13 and nothing else") {
  CHECK(builtinLayout(3, 9) == nullptr);
  CHECK(builtinLayout(3, 14) == nullptr);
  CHECK(builtinLayout(2, 7) == nullptr);
  for (int minor = 10; minor <= 13; ++minor) {
    const PythonLayout* l = builtinLayout(3, minor);
    REQUIRE(l != nullptr);
    CHECK(l->minor == minor);
    CHECK(l->ob_type == 8);
    // Windows stay small: one read per frame and per code object.
    CHECK(l->frameWindowEnd() <= 128);
    CHECK(l->codeWindowEnd() <= 160);
  }
  // The facts of DESIGN.md §9: previous at 48 on 3.11 and 8 on 3.12/3.13; _PyCFrame until
  // 3.12; native_thread_id from 3.11; frame objects on 3.10; C-stack frames from 3.12.
  CHECK(builtinLayout(3, 11)->frame_previous == 48);
  CHECK(builtinLayout(3, 12)->frame_previous == 8);
  CHECK(builtinLayout(3, 13)->frame_previous == 8);
  CHECK(builtinLayout(3, 11)->cframe_current_frame >= 0);
  CHECK(builtinLayout(3, 12)->cframe_current_frame >= 0);
  CHECK(builtinLayout(3, 13)->cframe_current_frame == kAbsent);
  CHECK(builtinLayout(3, 10)->tstate_native_thread_id == kAbsent);
  CHECK(builtinLayout(3, 11)->tstate_native_thread_id >= 0);
  CHECK(builtinLayout(3, 10)->frame_is_object);
  CHECK(builtinLayout(3, 10)->code_qualname == kAbsent);
  CHECK(builtinLayout(3, 11)->frame_owner_cstack == kAbsent);
  CHECK(builtinLayout(3, 12)->frame_owner_cstack == 3);
}

TEST_CASE("version parsing") {
  int major = 0, minor = 0;
  CHECK(parseVersionHex(0x030B07F0, &major, &minor));
  CHECK((major == 3 && minor == 11));
  CHECK_FALSE(parseVersionHex(0x020712F0, &major, &minor));
  CHECK(parseVersionText("3.10.13 (main, Jan  1 2024, 00:00:00) [GCC 12.2.0]", &major, &minor));
  CHECK((major == 3 && minor == 10));
  CHECK_FALSE(parseVersionText("", &major, &minor));
  CHECK_FALSE(parseVersionText("garbage", &major, &minor));
  CHECK_FALSE(parseVersionText("3", &major, &minor));
  CHECK_FALSE(parseVersionText("2.7.18", &major, &minor));
  CHECK_FALSE(parseVersionText(nullptr, &major, &minor));
}

namespace {

// A _Py_DebugOffsets image as 3.13.0 lays it out, filled from the built-in 3.13 entry.
std::vector<uint8_t> debugOffsets313() {
  std::vector<uint8_t> b(kDebugOffsetsBytes, 0);
  auto put = [&](size_t off, uint64_t v) { std::memcpy(b.data() + off, &v, 8); };
  std::memcpy(b.data(), "xdebugpy", 8);
  put(8, 0x030D00F0);
  const PythonLayout& l = *builtinLayout(3, 13);
  put(40, l.runtime_interpreters_head);
  put(64, l.interp_next);
  put(72, l.interp_threads_head);
  put(168, l.tstate_next);
  put(176, l.tstate_interp);
  put(184, l.tstate_frame);
  put(192, l.tstate_thread_id);
  put(200, static_cast<uint64_t>(l.tstate_native_thread_id));
  put(232, l.frame_previous);
  put(240, l.frame_code);
  put(264, static_cast<uint64_t>(l.frame_owner));
  put(280, l.code_filename);
  put(288, l.code_name);
  put(296, static_cast<uint64_t>(l.code_qualname));
  put(312, l.code_firstlineno);
  put(360, l.ob_type);
  put(544, l.unicode_state);
  put(552, l.unicode_length);
  put(560, l.ascii_header_bytes);
  return b;
}

}  // namespace

TEST_CASE("layoutFromDebugOffsets reads 3.13's published offsets and refuses the rest") {
  std::vector<uint8_t> b = debugOffsets313();
  PythonLayout l;
  std::string why;
  REQUIRE_MESSAGE(layoutFromDebugOffsets(b, &l, &why), why);
  const PythonLayout& t = *builtinLayout(3, 13);
  CHECK(l.runtime_interpreters_head == t.runtime_interpreters_head);
  CHECK(l.interp_threads_head == t.interp_threads_head);
  CHECK(l.tstate_frame == t.tstate_frame);
  CHECK(l.tstate_native_thread_id == t.tstate_native_thread_id);
  CHECK(l.frame_previous == t.frame_previous);
  CHECK(l.code_qualname == t.code_qualname);
  CHECK(l.compact_header_bytes == t.compact_header_bytes);
  CHECK(std::string(l.source).find("debug_offsets") != std::string::npos);

  // A moved field is taken from the offsets, not the table.
  std::vector<uint8_t> moved = b;
  uint64_t previous = 16;
  std::memcpy(moved.data() + 232, &previous, 8);
  REQUIRE(layoutFromDebugOffsets(moved, &l, &why));
  CHECK(l.frame_previous == 16);

  auto refused = [&](std::vector<uint8_t> bytes, const char* reason) {
    PythonLayout out;
    std::string w;
    CHECK_FALSE(layoutFromDebugOffsets(bytes, &out, &w));
    CHECK_MESSAGE(w.find(reason) != std::string::npos, w);
  };
  std::vector<uint8_t> x = b;
  x[0] = 'y';
  refused(x, "cookie");
  x = b;
  uint64_t v314 = 0x030E00F0;
  std::memcpy(x.data() + 8, &v314, 8);
  refused(x, "unsupported version");
  x = b;
  x[16] = 1;
  refused(x, "free-threaded");
  x = b;
  uint64_t huge = uint64_t{1} << 40;
  std::memcpy(x.data() + 184, &huge, 8);
  refused(x, "implausible");
  refused(std::vector<uint8_t>(b.begin(), b.begin() + 100), "truncated");
}
