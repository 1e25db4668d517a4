// StackSampler: the capture shim's CPU stack source (docs/capture/stacks.md). A thread of
// its own samples, `hz` times a second, the Python stack of every thread of the process's
// interpreter plus each one's native leaf, folds each into a stack id and publishes one
// sample (time, stack id, OS tid) per thread per tick into a ring that the collector drains
// into the StepAssembler as TraceEvent kStackSample; stacks seen for the first time become
// model::StackDictEntry values for the StepSender's stack dictionary.
//
// It never takes the GIL nor calls into Python (the training threads never wait on it): it
// reads the interpreter's memory through MemoryReader, so a pointer that changed under it
// is an error, counted, never a crash. Steady state allocates nothing: fixed-size thread,
// frame and stack tables; strings are read and built only for code objects and stacks new
// to it.
//
// The interpreter is looked for lazily, each round (a second apart until it is found): the
// shim may start before Python initializes. A process without Python is never sampled. An
// interpreter it cannot read (unsupported version or build), or walks that keep failing,
// switch it off with one log line.
//
// Threads: start()/stop() from the owner (the Collector), the sampler thread runs
// sampleOnce(), drain() and stats() from one consumer thread (the collector's).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "capture/stacks/frame_table.h"
#include "capture/stacks/memory_reader.h"
#include "capture/stacks/native_leaf.h"
#include "capture/stacks/python_runtime.h"
#include "capture/stacks/python_walker.h"
#include "capture/stacks/sample_ring.h"
#include "capture/stacks/stack_table.h"
#include "capture/trace_event.h"
#include "model/step_record.h"

namespace argus::capture::stacks {

struct StackSamplerOptions {
  int hz = 50;                    // ticks per second (ARGUS_STACK_HZ); 0: start() does nothing
  size_t max_threads = 64;        // Python threads sampled per tick (the first in the list)
  size_t max_stacks = 16384;      // distinct stacks described; later ones share one "overflow" stack
  size_t frame_slots = 4096;      // FrameTable slots (power of two)
  uint32_t ring_slots = 4096;     // samples between drains (power of two)
  bool native_leaf = true;        // read /proc/self/task/<tid>/syscall for the leaf frame
  int64_t (*clock_ns)() = nullptr;  // epoch ns of a sample; nullptr: CLOCK_REALTIME
  std::function<void(std::string_view)> log;  // the one line when it switches off
};

struct StackSamplerStats {
  uint64_t ticks = 0;
  uint64_t samples = 0;       // published into the ring
  uint64_t dropped = 0;       // ring full
  uint64_t stacks = 0;        // distinct stacks described
  uint64_t overflowed = 0;    // samples folded into the overflow stack
  uint64_t walk_failures = 0; // ticks whose interpreter list did not read
  uint64_t bad_threads = 0;
  uint64_t bad_frames = 0;    // frames or code objects that did not read or check out
  uint64_t memory_reads = 0;  // MemoryReader system calls (pages, code object batches, strings)
  uint64_t read_errors = 0;   // MemoryReader errors (each a kernel-refused read)
  uint64_t sample_ns = 0;     // time spent in ticks that sampled
  bool python = false;        // an interpreter was found
  bool off = false;           // switched off (or never on)
};

class StackSampler {
 public:
  static constexpr const char* kTruncatedText = "[truncated]";
  static constexpr const char* kOverflowText = "[stack table full]";
  static constexpr int kMaxFailedTicks = 250;  // consecutive failed walks before it gives up

  explicit StackSampler(StackSamplerOptions options);
  ~StackSampler();
  StackSampler(const StackSampler&) = delete;
  StackSampler& operator=(const StackSampler&) = delete;

  // Starts the sampling thread (once; nothing when hz == 0).
  void start();
  // Stops and joins it. Idempotent; the ring and the dictionary stay drainable.
  void stop();

  // One sampling round on the calling thread: the thread's body, also called directly by
  // tests and the bench. Returns the samples published.
  int sampleOnce();

  // Consumer side. Calls on_stacks with the dictionary entries of stacks new since the last
  // drain, then on_event for every sample published before that (so an entry always
  // reaches the sender before the samples that use it can reach a record).
  void drain(const std::function<void(std::span<const model::StackDictEntry>)>& on_stacks,
             const std::function<void(const TraceEvent&)>& on_event);

  StackSamplerStats stats() const;
  // "CPython 3.11 (built-in table (3.11)), process_vm_readv", or why there is none yet.
  std::string describe() const;

 private:
  void run();
  bool findInterpreter();
  void sampleThread(const ThreadFrames& t, int64_t ts_ns);
  void describeStack(uint64_t stack, std::string_view leaf, const ThreadFrames& t);
  void switchOff(const std::string& why);
  int64_t now() const;

  const StackSamplerOptions options_;
  MemoryReader reader_;
  PythonRuntime runtime_;
  std::unique_ptr<PythonWalker> walker_;  // set once the interpreter is found
  std::unique_ptr<FrameTable> frames_;
  NativeLeaf leaf_;
  StackTable table_;
  SampleRing ring_;
  std::unique_ptr<ThreadFrames[]> threads_;
  std::vector<FrameKey> keys_;
  std::vector<uint64_t> ids_;
  const uint64_t truncated_id_, overflow_id_;
  bool overflow_described_ = false;
  int failed_ticks_ = 0;

  mutable std::mutex pending_mu_;
  std::vector<model::StackDictEntry> pending_;  // GUARDED_BY(pending_mu_)
  std::vector<model::StackDictEntry> draining_; // consumer's
  std::string python_;                          // GUARDED_BY(pending_mu_): describe()

  // Counters written by the sampler thread, read by stats().
  std::atomic<uint64_t> ticks_{0}, samples_{0}, dropped_{0}, stacks_{0}, overflowed_{0}, sample_ns_{0};
  std::atomic<uint64_t> walk_failures_{0}, bad_threads_{0}, bad_frames_{0};
  std::atomic<bool> python_found_{false}, off_{false};

  std::mutex thread_mu_;
  std::condition_variable wake_;
  bool stop_ = false;  // GUARDED_BY(thread_mu_)
  std::thread thread_;
};

}  // namespace argus::capture::stacks
