#include "capture/stacks/python_walker.h"

#include <algorithm>
#include <cstring>

namespace argus::capture::stacks {
namespace {

constexpr uint32_t kMaxWindow = 512;  // bytes of a thread state or frame read at once

uint64_t u64(const uint8_t* p, uint32_t off) {
  uint64_t v;
  std::memcpy(&v, p + off, sizeof v);
  return v;
}

}  // namespace

int PythonWalker::walk(ThreadFrames* out, size_t max_threads) {
  ++stats_.walks;
  pages_.reset();
  const PythonLayout& l = rt_.layout;
  uint64_t interp = 0;
  if (!pages_.readValue(rt_.runtime + l.runtime_interpreters_head, &interp)) {
    ++stats_.failed_walks;
    return -1;
  }
  size_t n = 0;
  for (size_t i = 0; interp != 0 && i < kMaxInterpreters && n < max_threads; ++i) {
    // A list read while threads start and end can break at a thread state being freed,
    // losing every thread after it. It is read once more, from fresh pages: the list has
    // usually settled, and a sampled thread is not missing from the round for nothing.
    const size_t first = n;
    if (!walkThreadList(interp, out, max_threads, &n)) {
      n = first;
      pages_.reset();
      walkThreadList(interp, out, max_threads, &n);
    }
    if (!pages_.readValue(interp + l.interp_next, &interp)) break;
  }
  stats_.page_reads = pages_.pageReads();
  return static_cast<int>(n);
}

bool PythonWalker::walkThreadList(uint64_t interp, ThreadFrames* out, size_t max_threads, size_t* n) {
  uint64_t tstate = 0;
  if (!pages_.readValue(interp + rt_.layout.interp_threads_head, &tstate)) {
    ++stats_.bad_threads;
    return false;
  }
  // A thread list longer than max_threads is cut; a cycle (a list read mid-change) too.
  for (size_t k = 0; tstate != 0 && k < max_threads && *n < max_threads; ++k) {
    ThreadFrames& t = out[*n];
    uint64_t next = 0;
    if (!walkThread(tstate, interp, &t, &next)) {
      ++stats_.bad_threads;
      return false;
    }
    if (t.depth > 0) ++*n;
    tstate = next;
  }
  return true;
}

bool PythonWalker::walkThread(uint64_t tstate, uint64_t interp, ThreadFrames* t, uint64_t* next) {
  const PythonLayout& l = rt_.layout;
  uint32_t end = std::max({l.tstate_next, l.tstate_interp, l.tstate_frame, l.tstate_thread_id}) + 8;
  if (l.tstate_native_thread_id >= 0) end = std::max<uint32_t>(end, static_cast<uint32_t>(l.tstate_native_thread_id) + 8);
  uint8_t bytes[kMaxWindow];
  if (end > sizeof bytes || !pages_.read(tstate, bytes, end)) return false;
  if (u64(bytes, l.tstate_interp) != interp) return false;  // not a thread state of this interpreter
  *next = u64(bytes, l.tstate_next);
  t->tid = tidOf(bytes);
  t->depth = 0;
  t->truncated = false;
  uint64_t frame = u64(bytes, l.tstate_frame);
  if (frame != 0 && l.cframe_current_frame >= 0 &&
      !pages_.readValue(frame + static_cast<uint32_t>(l.cframe_current_frame), &frame)) {
    ++stats_.bad_frames;
    return true;  // a thread without a readable stack: skipped, the list goes on
  }
  walkFrames(frame, t);
  return true;
}

uint32_t PythonWalker::tidOf(const uint8_t* tstate_bytes) {
  const PythonLayout& l = rt_.layout;
  if (l.tstate_native_thread_id >= 0) return static_cast<uint32_t>(u64(tstate_bytes, static_cast<uint32_t>(l.tstate_native_thread_id)));
  // 3.10: thread_id is the pthread_t, the address of glibc's descriptor holding the tid.
  uint64_t pthread = u64(tstate_bytes, l.tstate_thread_id);
  int32_t tid = 0;
  if (rt_.pthread_tid_offset < 0 || !reader_.readValue(pthread + static_cast<uint32_t>(rt_.pthread_tid_offset), &tid) || tid < 0) return 0;
  return static_cast<uint32_t>(tid);
}

void PythonWalker::walkFrames(uint64_t frame, ThreadFrames* t) {
  const PythonLayout& l = rt_.layout;
  const uint32_t end = l.frameWindowEnd();
  uint8_t bytes[kMaxWindow];
  // Bounded twice the depth: frames owned by the C stack (3.12+) are skipped, not counted.
  for (uint32_t steps = 0; frame != 0; ++steps) {
    if (t->depth == ThreadFrames::kMaxDepth || steps == 2 * ThreadFrames::kMaxDepth) {
      t->truncated = true;
      return;
    }
    if (end > sizeof bytes || !pages_.read(frame, bytes, end)) {
      ++stats_.bad_frames;
      t->truncated = true;
      return;
    }
    if (l.frame_is_object && u64(bytes, l.ob_type) != rt_.frame_type) {
      ++stats_.bad_frames;
      t->truncated = true;
      return;
    }
    bool skip = l.frame_owner >= 0 && l.frame_owner_cstack >= 0 &&
                bytes[static_cast<uint32_t>(l.frame_owner)] == static_cast<uint8_t>(l.frame_owner_cstack);
    if (!skip) t->code[t->depth++] = u64(bytes, l.frame_code);
    frame = u64(bytes, l.frame_previous);
  }
}

}  // namespace argus::capture::stacks
