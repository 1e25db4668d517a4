// ByteBudget: the global bound on bytes received but not yet committed (backpressure).
// Sessions charge what they hand to the committer and stop reading their sockets while
// the budget is exhausted; the committer releases bytes after each commit and wakes the
// sessions that were waiting. Thread-safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <vector>

namespace argus::ingest {

class ByteBudget {
 public:
  explicit ByteBudget(size_t limit_bytes) : limit_(limit_bytes) {}

  void charge(size_t bytes) { used_.fetch_add(bytes, std::memory_order_relaxed); }
  bool exhausted() const { return used_.load(std::memory_order_relaxed) >= limit_; }
  size_t used() const { return used_.load(std::memory_order_relaxed); }
  size_t limit() const { return limit_; }

  // Runs `resume` once the budget is no longer exhausted (at once if it is not now).
  // `resume` runs on the releasing thread and must only post work elsewhere.
  void whenAvailable(std::function<void()> resume) {
    {
      std::lock_guard lock(mu_);
      if (exhausted()) {
        waiters_.push_back(std::move(resume));
        return;
      }
    }
    resume();
  }

  void release(size_t bytes) {
    used_.fetch_sub(bytes, std::memory_order_relaxed);
    std::vector<std::function<void()>> wake;
    {
      std::lock_guard lock(mu_);
      if (exhausted() || waiters_.empty()) return;
      wake.swap(waiters_);
    }
    for (auto& w : wake) w();
  }

 private:
  const size_t limit_;
  std::atomic<size_t> used_{0};
  std::mutex mu_;
  std::vector<std::function<void()>> waiters_;  // GUARDED_BY(mu_)
};

}  // namespace argus::ingest
