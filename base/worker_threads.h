#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>

namespace argus {

// How many threads a parallel part of one query uses by default: one per core, at most 8
// (past that a query's stripes and groups are too few to keep more busy, and concurrent
// queries share the cores anyway).
inline unsigned defaultWorkerThreads() { return std::clamp(std::thread::hardware_concurrency(), 1u, 8u); }

namespace detail {
void runTasks(size_t n, void (*call)(void* work, size_t i), void* work);
}  // namespace detail

// Runs work(i) for each i in [0, n) and returns when all have: 0 on the caller's thread,
// the others on the process's worker threads, which outlive the call (started at the first
// call, defaultWorkerThreads() - 1 of them). What a worker keeps per thread (decoder scratch,
// zstd contexts, the allocator's caches) therefore stays warm from one query to the next,
// and a query starts no threads: threads started per call faulted in their stacks and that
// scratch again every time. A task no worker is free to take (more tasks than cores, other
// callers' tasks ahead of these) the caller runs itself, so nested and concurrent calls
// cannot deadlock. When a task throws, wherever it runs, the tasks not yet started are
// dropped and the first exception leaves the call once no other task runs.
template <typename Work>
void runOnThreads(size_t n, Work&& work) {
  using W = std::remove_reference_t<Work>;
  detail::runTasks(n, [](void* w, size_t i) { (*static_cast<W*>(w))(i); }, const_cast<void*>(static_cast<const void*>(&work)));
}

// Runs task on one of those worker threads that is idle now, for as long as the task takes:
// for a producer that hands its output to the caller as it goes (query/execution/gather.h,
// storage/parallel_scan_cursor.h), which would otherwise start a thread of its own per
// query. False, and task not run, when no worker is idle: the caller then does that work
// itself. The task must not throw, and must not wait for work that only the pool runs; its
// caller learns of its end from it (WorkerLoans does the counting).
bool tryLendWorker(std::function<void()> task);

// One owner's lent tasks: waitAll() returns once every task it lent has returned, so the
// owner may then free what they use (as joining its own threads did).
class WorkerLoans {
 public:
  // tryLendWorker, counted.
  bool tryLend(std::function<void()> task);
  void waitAll();

 private:
  std::mutex mu_;
  std::condition_variable returned_;
  size_t out_ = 0;  // lent, not yet returned
};

}  // namespace argus
