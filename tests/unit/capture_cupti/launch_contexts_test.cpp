// LaunchContexts: ids for NVTX range changes, found until the ring overwrites them, never
// read half-written while training threads open contexts concurrently.
#include "capture/cupti/launch_contexts.h"

#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

using namespace argus::capture::cupti;

TEST_CASE("open and find; ids are never 0; overwritten contexts are not found") {
  LaunchContexts c(8);
  CHECK(c.capacity() == 8);
  uint64_t a = c.open(1, 100);
  uint64_t b = c.open(2, 200);
  CHECK(a != 0);
  CHECK(b != a);
  LaunchContexts::Context x;
  REQUIRE(c.find(a, &x));
  CHECK(x.thread == 1);
  CHECK(x.ts_ns == 100);
  REQUIRE(c.find(b, &x));
  CHECK(x.thread == 2);
  CHECK(x.ts_ns == 200);
  CHECK_FALSE(c.find(0, &x));
  CHECK_FALSE(c.find(b + 1, &x));  // not yet opened
  for (int i = 0; i < 7; ++i) c.open(3, 300 + i);
  CHECK_FALSE(c.find(a, &x));  // 8 newer contexts: a's slot was reused
  REQUIRE(c.find(b, &x));      // b survives one more
  CHECK(c.opened() == 9);
}

TEST_CASE("capacity rounds up to a power of two") {
  CHECK(LaunchContexts(0).capacity() == 2);
  CHECK(LaunchContexts(1000).capacity() == 1024);
  CHECK(LaunchContexts(UINT32_MAX).capacity() == (1u << 24));
}

TEST_CASE("concurrent writers, one reader: a found context is always one writer's whole entry") {
  LaunchContexts c(64);  // small ring: constant overwrites
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (uint32_t t = 1; t <= 3; ++t) {
    writers.emplace_back([&, t] {
      for (int64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        c.open(t, static_cast<int64_t>(t) * 1'000'000'000 + i);
        if (i % 32 == 0) std::this_thread::yield();  // let the reader run on a busy machine
      }
    });
  }
  uint64_t found = 0, mixed = 0;
  for (int i = 0; i < 20'000'000 && found < 100'000; ++i) {
    uint64_t id = c.opened() - (i % 48);
    LaunchContexts::Context x;
    if (!c.find(id, &x)) continue;
    ++found;
    if (x.thread < 1 || x.thread > 3 || x.ts_ns / 1'000'000'000 != x.thread) ++mixed;
  }
  stop.store(true);
  for (auto& w : writers) w.join();
  CHECK(found > 0);
  CHECK(mixed == 0);
}
