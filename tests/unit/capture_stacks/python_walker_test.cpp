// PythonWalker and FrameTable over hand-built CPython 3.11 structures in this process's
// memory (the layout table's offsets), then the same structures made hostile: cycles, bad
// pointers, wrong types, odd strings, a thread state of another interpreter. Every case
// ends in bounded output and counted errors, never a crash or a hang.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "capture/stacks/frame_table.h"
#include "capture/stacks/python_walker.h"

using namespace argus::capture::stacks;

namespace {

// One fake object: zeroed bytes with fields written at offsets.
struct Obj {
  std::vector<uint8_t> bytes;
  explicit Obj(size_t n) : bytes(n, 0) {}
  uint64_t addr() const { return reinterpret_cast<uintptr_t>(bytes.data()); }
  template <typename T>
  void put(uint32_t off, T v) {
    std::memcpy(bytes.data() + off, &v, sizeof v);
  }
};

// A 3.11 interpreter with one thread whose stack is inner <- middle <- outer.
struct FakePython {
  const PythonLayout& l = *builtinLayout(3, 11);
  Obj code_type{16}, unicode_type{16};
  Obj runtime{64}, interp{64}, tstate{256}, cframe{16};
  std::vector<std::unique_ptr<Obj>> frames, codes, strings;
  PythonRuntime rt;

  uint64_t str(const std::string& text, uint32_t state_bits = (1u << 2) | (1u << 5) | (1u << 6), int64_t length = -1) {
    auto s = std::make_unique<Obj>(l.ascii_header_bytes + text.size() + 1);
    s->put<uint64_t>(l.ob_type, unicode_type.addr());
    s->put<int64_t>(l.unicode_length, length >= 0 ? length : static_cast<int64_t>(text.size()));
    s->put<uint32_t>(l.unicode_state, state_bits);
    std::memcpy(s->bytes.data() + l.ascii_header_bytes, text.data(), text.size());
    strings.push_back(std::move(s));
    return strings.back()->addr();
  }
  uint64_t code(const std::string& qualname, const std::string& file, int32_t line) {
    auto c = std::make_unique<Obj>(160);
    c->put<uint64_t>(l.ob_type, code_type.addr());
    c->put<uint64_t>(l.code_filename, str(file));
    c->put<uint64_t>(l.code_name, str(qualname));
    c->put<uint64_t>(static_cast<uint32_t>(l.code_qualname), str(qualname));
    c->put<int32_t>(l.code_firstlineno, line);
    codes.push_back(std::move(c));
    return codes.back()->addr();
  }
  Obj& frame(size_t i) { return *frames[i]; }

  FakePython() {
    rt.runtime = runtime.addr();
    rt.code_type = code_type.addr();
    rt.unicode_type = unicode_type.addr();
    rt.layout = l;
    runtime.put<uint64_t>(l.runtime_interpreters_head, interp.addr());
    interp.put<uint64_t>(l.interp_threads_head, tstate.addr());
    tstate.put<uint64_t>(l.tstate_interp, interp.addr());
    tstate.put<uint64_t>(l.tstate_frame, cframe.addr());
    tstate.put<uint64_t>(static_cast<uint32_t>(l.tstate_native_thread_id), 1234);
    const char* names[] = {"Model.inner", "middle", "outer"};
    for (int i = 0; i < 3; ++i) {
      frames.push_back(std::make_unique<Obj>(80));
      frames.back()->put<uint64_t>(l.frame_code, code(names[i], "/w/train.py", 10 * (i + 1)));
    }
    for (int i = 0; i < 2; ++i) frame(i).put<uint64_t>(l.frame_previous, frame(i + 1).addr());
    cframe.put<uint64_t>(static_cast<uint32_t>(l.cframe_current_frame), frame(0).addr());
  }
};

uint64_t unmappedPage() {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  void* p = ::mmap(nullptr, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ::munmap(p, page);
  return reinterpret_cast<uintptr_t>(p);
}

struct Walked {
  int threads;
  std::vector<std::string> frames;  // of the first thread, leaf first
  ThreadFrames first;
};

Walked walkAll(FakePython& py, MemoryReader& reader, FrameTable& table, PythonWalker& walker, size_t max_threads = 8) {
  std::vector<ThreadFrames> out(max_threads);
  Walked w{walker.walk(out.data(), max_threads), {}, {}};
  if (w.threads <= 0) return w;
  w.first = out[0];
  std::vector<FrameKey> keys(out[0].depth);
  std::vector<uint64_t> ids(out[0].depth);
  table.resolve(out[0].code, out[0].depth, keys.data(), ids.data());
  for (uint32_t i = 0; i < out[0].depth; ++i) {
    w.frames.push_back(table.text(keys[i]));
    CHECK(ids[i] == FrameTable::idOfText(w.frames.back()));
  }
  return w;
}

}  // namespace

TEST_CASE("PythonWalker + FrameTable read a well-formed 3.11 thread") {
  FakePython py;
  MemoryReader reader;
  FrameTable table(py.rt, reader, 64);
  PythonWalker walker(py.rt, reader);
  Walked w = walkAll(py, reader, table, walker);
  REQUIRE(w.threads == 1);
  CHECK(w.first.tid == 1234);
  CHECK_FALSE(w.first.truncated);
  CHECK(w.frames == std::vector<std::string>{"Model.inner (/w/train.py:10)", "middle (/w/train.py:20)", "outer (/w/train.py:30)"});
  // The second walk looks each frame up once more. The table is direct-mapped on heap
  // addresses, so two of the three frames may share a slot; a lone frame always hits.
  FrameTableStats before = table.stats();
  Walked again = walkAll(py, reader, table, walker);
  CHECK(again.frames == w.frames);
  CHECK(table.stats().hits - before.hits + table.stats().misses - before.misses == 3);
  py.frame(0).put<uint64_t>(py.l.frame_previous, 0);
  walkAll(py, reader, table, walker);
  before = table.stats();
  walkAll(py, reader, table, walker);
  CHECK(table.stats().misses == before.misses);
  CHECK(table.stats().hits == before.hits + 1);
}

TEST_CASE("PythonWalker: hostile frame and thread lists stay bounded") {
  FakePython py;
  MemoryReader reader;
  FrameTable table(py.rt, reader, 64);
  PythonWalker walker(py.rt, reader);

  SUBCASE("a frame cycle is cut at the depth bound") {
    py.frame(2).put<uint64_t>(py.l.frame_previous, py.frame(0).addr());
    Walked w = walkAll(py, reader, table, walker);
    REQUIRE(w.threads == 1);
    CHECK(w.first.depth == ThreadFrames::kMaxDepth);
    CHECK(w.first.truncated);
  }
  SUBCASE("a frame pointer into an unmapped page ends the stack there, counted") {
    py.frame(1).put<uint64_t>(py.l.frame_previous, unmappedPage());
    Walked w = walkAll(py, reader, table, walker);
    REQUIRE(w.threads == 1);
    CHECK(w.first.depth == 2);
    CHECK(w.first.truncated);
    CHECK(walker.stats().bad_frames == 1);
  }
  SUBCASE("a thread list cycle is cut at max_threads") {
    py.tstate.put<uint64_t>(py.l.tstate_next, py.tstate.addr());
    Walked w = walkAll(py, reader, table, walker, 8);
    CHECK(w.threads == 8);
  }
  SUBCASE("a thread state of another interpreter is refused") {
    py.tstate.put<uint64_t>(py.l.tstate_interp, py.runtime.addr());
    Walked w = walkAll(py, reader, table, walker);
    CHECK(w.threads == 0);
    CHECK(walker.stats().bad_threads == 2);  // the list broke, was read once more, broke again
  }
  SUBCASE("an unreadable interpreter list fails the walk") {
    py.runtime.put<uint64_t>(py.l.runtime_interpreters_head, unmappedPage());
    Walked w = walkAll(py, reader, table, walker);
    CHECK(w.threads == 0);  // the interpreter's thread list did not read: no threads
    py.rt.runtime = unmappedPage();
    PythonWalker gone(py.rt, reader);
    std::vector<ThreadFrames> out(4);
    CHECK(gone.walk(out.data(), 4) == -1);
    CHECK(gone.stats().failed_walks == 1);
  }
  SUBCASE("null current frame: a thread without Python frames is skipped") {
    py.cframe.put<uint64_t>(static_cast<uint32_t>(py.l.cframe_current_frame), 0);
    Walked w = walkAll(py, reader, table, walker);
    CHECK(w.threads == 0);
  }
}

TEST_CASE("FrameTable: hostile code objects and strings give marked frames, never a crash") {
  FakePython py;
  MemoryReader reader;
  FrameTable table(py.rt, reader, 64);
  PythonWalker walker(py.rt, reader);
  const PythonLayout& l = py.l;

  SUBCASE("a code pointer into an unmapped page") {
    py.frame(1).put<uint64_t>(l.frame_code, unmappedPage());
    Walked w = walkAll(py, reader, table, walker);
    REQUIRE(w.frames.size() == 3);
    CHECK(w.frames[0] == "Model.inner (/w/train.py:10)");
    CHECK(w.frames[1] == FrameTable::kBadFrameText);
    CHECK(w.frames[2] == "outer (/w/train.py:30)");  // the frames after it still resolve
    CHECK(table.stats().bad_code == 1);
  }
  SUBCASE("an object that is not a code object") {
    py.codes[0]->put<uint64_t>(l.ob_type, py.unicode_type.addr());
    Walked w = walkAll(py, reader, table, walker);
    CHECK(w.frames[0] == FrameTable::kBadFrameText);
  }
  SUBCASE("a name that is not a str, a non-compact str, a bad kind") {
    py.codes[0]->put<uint64_t>(static_cast<uint32_t>(l.code_qualname), py.codes[1]->addr());
    py.codes[1]->put<uint64_t>(static_cast<uint32_t>(l.code_qualname), py.str("x", 1u << 2));  // compact bit off
    py.codes[2]->put<uint64_t>(static_cast<uint32_t>(l.code_qualname), py.str("y", (3u << 2) | (1u << 5) | (1u << 6)));
    Walked w = walkAll(py, reader, table, walker);
    CHECK(w.frames[0] == "? (/w/train.py:10)");
    CHECK(w.frames[1] == "? (/w/train.py:20)");
    CHECK(w.frames[2] == "? (/w/train.py:30)");
    CHECK(table.stats().bad_strings >= 3);  // counted per read: a frame whose slot was taken reads again
  }
  SUBCASE("an absurd length is cut at kMaxTextChars") {
    std::string long_name(FrameTable::kMaxTextChars + 40, 'a');
    py.codes[0]->put<uint64_t>(static_cast<uint32_t>(l.code_qualname), py.str(long_name, (1u << 2) | (1u << 5) | (1u << 6), int64_t{1} << 40));
    Walked w = walkAll(py, reader, table, walker);
    CHECK(w.frames[0] == std::string(FrameTable::kMaxTextChars, 'a') + "... (/w/train.py:10)");
  }
  SUBCASE("a non-ASCII (latin-1) name is UTF-8 in the text") {
    auto s = std::make_unique<Obj>(l.compact_header_bytes + 8);
    s->put<uint64_t>(l.ob_type, py.unicode_type.addr());
    s->put<int64_t>(l.unicode_length, 3);
    s->put<uint32_t>(l.unicode_state, (1u << 2) | (1u << 5));  // kind 1, compact, not ASCII
    const uint8_t latin1[] = {'c', 0xE9, 'f'};
    std::memcpy(s->bytes.data() + l.compact_header_bytes, latin1, 3);
    py.codes[0]->put<uint64_t>(static_cast<uint32_t>(l.code_qualname), s->addr());
    Walked w = walkAll(py, reader, table, walker);
    CHECK(w.frames[0] == "c\xC3\xA9" "f (/w/train.py:10)");
  }
  SUBCASE("a code object replaced at the same address gets its new text") {
    walkAll(py, reader, table, walker);
    py.codes[0]->put<int32_t>(l.code_firstlineno, 11);
    Walked w = walkAll(py, reader, table, walker);
    CHECK(w.frames[0] == "Model.inner (/w/train.py:11)");
  }
}
