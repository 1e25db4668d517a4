// runOnThreads: every task once, task 0 on the caller's thread, the workers reused from one
// call to the next, nested and concurrent calls (more tasks than workers) that finish, and
// exceptions from tasks on either thread that reach the caller; tryLendWorker: loans on the
// same workers, refused once every worker is lent, without blocking runOnThreads.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/worker_threads.h"
#include "tests/unit/base/held_workers.h"

using namespace argus;

TEST_CASE("runOnThreads runs each task once, task 0 on the caller's thread") {
  for (size_t n : {0, 1, 2, 3, 17, 64}) {
    CAPTURE(n);
    std::vector<std::atomic<int>> runs(n);
    std::thread::id first;
    runOnThreads(n, [&](size_t i) {
      runs[i].fetch_add(1);
      if (i == 0) first = std::this_thread::get_id();
    });
    for (size_t i = 0; i < n; ++i) CHECK(runs[i].load() == 1);
    if (n > 0) CHECK(first == std::this_thread::get_id());
  }
}

TEST_CASE("runOnThreads reuses its worker threads from one call to the next") {
  // Task 0 (the caller) waits for task 1 to start, which only a worker can do meanwhile.
  // Each thread counts the calls it ran task 1 for: a worker that outlives the calls counts
  // several; threads started per call would each count one.
  constexpr int kCalls = 100;
  int most = 0;
  for (int call = 0; call < kCalls; ++call) {
    std::atomic<bool> started{false};
    runOnThreads(2, [&](size_t i) {
      if (i == 1) {
        thread_local int ran = 0;
        most = std::max(most, ++ran);
        started = true;
        return;
      }
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!started && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    });
  }
  // Workers: one per core but the caller's, so some worker ran task 1 more than once.
  CHECK(most > 1);
}

TEST_CASE("nested and concurrent runOnThreads calls finish, each task once") {
  constexpr size_t kCallers = 4, kOuter = 6, kInner = 5;
  std::atomic<size_t> total{0};
  std::vector<std::thread> callers;
  for (size_t c = 0; c < kCallers; ++c) {
    callers.emplace_back([&] {
      for (int round = 0; round < 10; ++round) {
        runOnThreads(kOuter, [&](size_t) { runOnThreads(kInner, [&](size_t) { total.fetch_add(1); }); });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  CHECK(total.load() == kCallers * 10 * kOuter * kInner);
}

TEST_CASE("an exception from the caller's task leaves runOnThreads only once no other task runs") {
  // Task 0 throws once a worker has started task 1; the tasks not started yet never start,
  // and the one running finishes before the exception reaches the caller.
  std::atomic<int> started{0}, finished{0};
  auto work = [&](size_t i) {
    if (i == 0) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (started == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
      throw std::runtime_error("task 0");
    }
    started.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    finished.fetch_add(1);
  };
  CHECK_THROWS_AS(runOnThreads(4, work), std::runtime_error);
  CHECK(started.load() == finished.load());
}

TEST_CASE("an exception from a worker's task reaches the caller; the process goes on") {
  // Task 0 (the caller's) waits until a worker runs a task; each task on a worker throws.
  // The exception leaves runOnThreads (not std::terminate), and the pool takes the next call
  // as usual.
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> on_worker{0};
  auto work = [&](size_t i) {
    if (i == 0) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (on_worker == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
      return;
    }
    if (std::this_thread::get_id() == caller) return;
    on_worker.fetch_add(1);
    throw std::runtime_error("worker task " + std::to_string(i));
  };
  CHECK_THROWS_WITH_AS(runOnThreads(64, work), doctest::Contains("worker task"), std::runtime_error);
  CHECK(on_worker.load() >= 1);
  std::atomic<int> after{0};
  runOnThreads(8, [&](size_t) { after.fetch_add(1); });
  CHECK(after.load() == 8);
}

namespace {

// Calls done() until it holds (10 s at most); whether it did. Once true, never called again.
template <typename Done>
bool waitFor(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::yield();
  }
}

}  // namespace

TEST_CASE("tryLendWorker runs a task on a worker thread, the same workers from one loan to the next") {
  // Each thread counts the loans it ran, as in the runOnThreads case above: threads started
  // per loan would each count one (their ids, reused once a thread ends, cannot tell).
  constexpr int kLoans = 20;
  int most = 0;
  for (int loan = 0; loan < kLoans; ++loan) {
    std::atomic<bool> done{false};
    std::thread::id id;
    // A worker that just finished a task may not be idle yet: try again until one is.
    REQUIRE(waitFor([&] {
      return tryLendWorker([&] {
        thread_local int ran = 0;
        most = std::max(most, ++ran);
        id = std::this_thread::get_id();
        done = true;
      });
    }));
    REQUIRE(waitFor([&] { return done.load(); }));
    CHECK(id != std::this_thread::get_id());
  }
  CHECK(most > 1);
}

TEST_CASE("tryLendWorker refuses once every worker is lent, and runOnThreads still finishes") {
  testutil::HeldWorkers held;
  CHECK(held.held() >= 1);
  CHECK(held.held() < static_cast<int>(defaultWorkerThreads()) + 1);
  std::atomic<int> refused_ran{0};
  CHECK_FALSE(tryLendWorker([&] { refused_ran.fetch_add(1); }));
  REQUIRE(held.allStarted());
  // Every worker is busy: the caller runs each task itself.
  std::vector<std::atomic<int>> runs(5);
  runOnThreads(runs.size(), [&](size_t i) { runs[i].fetch_add(1); });
  for (auto& r : runs) CHECK(r.load() == 1);
  held.release();
  CHECK(refused_ran.load() == 0);
}
