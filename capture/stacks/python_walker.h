// PythonWalker: one pass over the interpreter's threads and frames, reading only through a
// MemoryReader (docs/capture/stacks.md, "The walk"). It never takes the GIL: the structures
// change under it, so every pointer is checked where it can be (a frame's code object must
// have PyCode_Type, a thread state must point back at its interpreter) and every loop is
// bounded; what fails to read ends that thread's stack (counted), never the process.
//
// Not thread-safe: one walker per sampler thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "capture/stacks/memory_reader.h"
#include "capture/stacks/page_cache.h"
#include "capture/stacks/python_runtime.h"

namespace argus::capture::stacks {

// One thread's Python stack: the code objects of its frames, leaf first.
struct ThreadFrames {
  static constexpr uint32_t kMaxDepth = 128;
  uint32_t tid = 0;       // OS thread id (0 when unknown)
  uint32_t depth = 0;     // frames in code[]
  bool truncated = false; // deeper than kMaxDepth, or a frame failed to read: root side cut
  uint64_t code[kMaxDepth];
};

struct WalkStats {
  uint64_t walks = 0;
  uint64_t failed_walks = 0;   // the interpreter list itself did not read
  uint64_t bad_threads = 0;    // reads of a thread state that did not read or check out
  uint64_t bad_frames = 0;     // a frame or code object that did not read or check out
  uint64_t page_reads = 0;     // system calls of the walks
};

class PythonWalker {
 public:
  static constexpr size_t kMaxInterpreters = 16;

  PythonWalker(const PythonRuntime& runtime, MemoryReader& reader) : rt_(runtime), reader_(reader), pages_(reader) {}

  // Fills out[0, n) with the threads that have at least one Python frame, in the
  // interpreter's thread order, up to `max_threads`. Returns n; -1 when the interpreter
  // list did not read (counted in failed_walks).
  int walk(ThreadFrames* out, size_t max_threads);

  const WalkStats& stats() const { return stats_; }

 private:
  // Walks the thread list of `interp` into out[*n, ...), advancing *n. False: a thread
  // state (or the list head) did not read or check out, and the list stopped there.
  bool walkThreadList(uint64_t interp, ThreadFrames* out, size_t max_threads, size_t* n);
  // Reads the frames of the thread state at `tstate` into *t. False: the thread state
  // itself is bad (then *next is not set).
  bool walkThread(uint64_t tstate, uint64_t interp, ThreadFrames* t, uint64_t* next);
  uint32_t tidOf(const uint8_t* tstate_bytes);
  void walkFrames(uint64_t frame, ThreadFrames* t);

  const PythonRuntime rt_;
  MemoryReader& reader_;  // reads outside the walk's pages (3.10's tid)
  PageCache pages_;       // thread states and frames: a page per system call, per walk
  WalkStats stats_;
};

}  // namespace argus::capture::stacks
