#include "base/worker_threads.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <system_error>
#include <utility>
#include <vector>

namespace argus::detail {
namespace {

// One runTasks call: its tasks, the next one nobody has claimed, and how many a worker is
// running. It lives on the caller's stack; workers touch it only under the pool's mutex or
// while a task they claimed runs, and the caller returns once neither can happen.
struct Batch {
  size_t n;
  void (*call)(void*, size_t);
  void* work;
  size_t next = 1;  // task 0 is the caller's
  size_t running = 0;
  std::exception_ptr error = nullptr;  // the first a task threw
};

class WorkerPool {
 public:
  explicit WorkerPool(size_t threads) : wanted_(threads) {}

  void run(size_t n, void (*call)(void*, size_t), void* work) {
    Batch b{n, call, work};
    {
      std::lock_guard<std::mutex> lock(mu_);
      startWorkers();
      queue_.push_back(&b);  // holds the batch while it has unclaimed tasks
    }
    ready_.notify_all();
    try {
      call(work, 0);
      for (;;) {  // then every task no worker has taken
        size_t i = 0;
        {
          std::lock_guard<std::mutex> lock(mu_);
          if (b.next >= n) break;
          i = claim(&b);
        }
        call(work, i);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      fail(&b, std::current_exception());
    }
    // The tasks share state on the caller's stack: none may still run when the call returns
    // or its exception leaves.
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return b.running == 0; });
    if (b.error) std::rethrow_exception(b.error);
  }

  bool lend(std::function<void()>& task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      startWorkers();
      if (idle_ <= lent_.size()) return false;  // each lent task has an idle worker of its own
      lent_.push_back(std::move(task));
    }
    ready_.notify_all();
    return true;
  }

 private:
  // REQUIRES: mu_ held. A task of b threw: its tasks not yet started never will, and the
  // first exception is the one the caller rethrows.
  void fail(Batch* b, std::exception_ptr error) {
    if (!b->error) b->error = std::move(error);
    if (b->next < b->n) {
      b->next = b->n;
      queue_.erase(std::find(queue_.begin(), queue_.end(), b));
    }
  }

  // REQUIRES: mu_ held, b->next < b->n. The last claim takes the batch off the queue.
  size_t claim(Batch* b) {
    const size_t i = b->next++;
    if (b->next == b->n) queue_.erase(std::find(queue_.begin(), queue_.end(), b));
    return i;
  }

  // REQUIRES: mu_ held. Workers start at the first call that has work for them: a process
  // that never runs a parallel query starts none. One that cannot start now (a thread limit)
  // is tried again at the next call; meanwhile the callers run the tasks themselves.
  void startWorkers() {
    while (workers_.size() < wanted_) {
      try {
        workers_.emplace_back([this] { loop(); });
      } catch (const std::system_error&) {
        return;
      }
    }
  }

  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      ++idle_;
      ready_.wait(lock, [&] { return !queue_.empty() || !lent_.empty(); });
      --idle_;
      if (!lent_.empty()) {
        std::function<void()> task = std::move(lent_.front());
        lent_.pop_front();
        lock.unlock();
        task();  // noexcept by contract: a throw ends the process here
        task = nullptr;  // what it captured goes before the worker is idle again
        lock.lock();
        continue;
      }
      Batch* b = queue_.front();
      const size_t i = claim(b);
      ++b->running;
      lock.unlock();
      std::exception_ptr error;
      try {
        b->call(b->work, i);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      if (error) fail(b, std::move(error));
      if (--b->running == 0) done_.notify_all();
    }
  }

  const size_t wanted_;
  std::mutex mu_;
  std::condition_variable ready_;  // a batch or a lent task was queued
  std::condition_variable done_;   // a batch's last running task finished
  std::deque<Batch*> queue_;       // batches with unclaimed tasks, oldest first
  std::deque<std::function<void()>> lent_;  // lent tasks no worker has started yet
  size_t idle_ = 0;                // workers waiting for work
  std::vector<std::thread> workers_;
};

WorkerPool& pool() {
  // Never destroyed: workers wait for work until the process ends, and exit does not wait
  // for one that is running a task.
  // As many as one query uses besides its own thread (defaultWorkerThreads): every worker
  // keeps its per-thread buffers for good, so no more are started than a query can use.
  static WorkerPool* p = new WorkerPool(std::max(defaultWorkerThreads(), 2u) - 1);
  return *p;
}

}  // namespace

void runTasks(size_t n, void (*call)(void*, size_t), void* work) {
  if (n == 0) return;
  if (n == 1) {
    call(work, 0);
    return;
  }
  pool().run(n, call, work);
}

}  // namespace argus::detail

namespace argus {

bool tryLendWorker(std::function<void()> task) {
  // Workers keep their per-thread state across queries; a lent task runs with exceptions
  // leaving it fatal, as a thread's body would.
  return detail::pool().lend(task);
}

bool WorkerLoans::tryLend(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++out_;  // before the task can return
  }
  const bool lent = tryLendWorker([this, task = std::move(task)] {
    task();
    // Notified under the lock: once waitAll() sees 0 the owner may free this object.
    std::lock_guard<std::mutex> lock(mu_);
    if (--out_ == 0) returned_.notify_all();
  });
  if (!lent) {
    std::lock_guard<std::mutex> lock(mu_);
    --out_;
  }
  return lent;
}

void WorkerLoans::waitAll() {
  std::unique_lock<std::mutex> lock(mu_);
  returned_.wait(lock, [&] { return out_ == 0; });
}

}  // namespace argus
