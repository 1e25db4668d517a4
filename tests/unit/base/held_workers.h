// HeldWorkers: lends every idle worker of the process's pool (base/worker_threads.h) a task
// that waits until release() or the destructor, so that a test can run what must work with
// no worker free. Both wait for the tasks to end, since the tasks read this object.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

#include "base/worker_threads.h"

namespace argus::testutil {

class HeldWorkers {
 public:
  HeldWorkers() {
    while (held_ < kMaxWorkers && loans_.tryLend([this] {
             started_.fetch_add(1);
             while (!released_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
           })) {
      ++held_;
    }
  }
  ~HeldWorkers() { release(); }
  HeldWorkers(const HeldWorkers&) = delete;
  HeldWorkers& operator=(const HeldWorkers&) = delete;

  int held() const { return held_; }
  // Whether every held task has started (10 s at most).
  bool allStarted() const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started_.load() < held_ && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    return started_.load() == held_;
  }
  // Lets the tasks end and waits until they have.
  void release() {
    released_ = true;
    loans_.waitAll();
  }

 private:
  static constexpr int kMaxWorkers = 64;
  int held_ = 0;
  std::atomic<int> started_{0};
  std::atomic<bool> released_{false};
  WorkerLoans loans_;
};

}  // namespace argus::testutil
