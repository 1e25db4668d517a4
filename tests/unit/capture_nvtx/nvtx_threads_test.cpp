// Many threads: the drain merges their events by call time, keeps each thread's order and
// id, loses nothing of a thread that exited, and hands an exited thread's state to the next
// thread. A stress case records from four threads while a fifth drains.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "capture/nvtx/nvtx_injection.h"
#include "nvtx_test_util.h"

using namespace argus::capture;
using namespace argus::capture::nvtx;
using namespace argus::capture::nvtx::handlers;
using argus::capture::nvtx::testing::Collected;
using argus::capture::nvtx::testing::currentTid;

TEST_CASE("two threads: merged by call time, each thread in order, records of exited threads kept") {
  Collected c;
  uint32_t tids[2] = {};
  auto work = [&](int k) {
    tids[k] = currentTid();
    std::string name = "t" + std::to_string(k);
    for (int i = 0; i < 500; ++i) {
      rangePushA(name.c_str());
      markA("m");
      rangePop();
    }
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();  // both exited before the first drain
  auto ev = c.pull();
  REQUIRE(ev.size() == 3000);
  int64_t last = INT64_MIN;
  std::map<uint32_t, int64_t> last_of;
  std::map<uint32_t, int> per_thread;
  for (const TraceEvent& e : ev) {
    CHECK(e.start_ns >= last);
    last = e.start_ns;
    CHECK(e.start_ns >= last_of[e.thread]);
    last_of[e.thread] = e.start_ns;
    ++per_thread[e.thread];
    if (e.type == EventType::kRangeBegin) CHECK(c.name(e) == (e.thread == tids[0] ? "t0" : "t1"));
  }
  CHECK(per_thread[tids[0]] == 1500);
  CHECK(per_thread[tids[1]] == 1500);
}

TEST_CASE("an exited thread's state goes to the next thread, with a fresh name cache") {
  Collected c;
  std::thread([] { markA("first-thread"); }).join();
  c.pull();  // drains the exited thread and frees its state
  uint64_t states = c.drain.stats().threads;
  uint32_t tid = 0;
  std::thread([&] {
    tid = currentTid();
    markA("second-thread");
    markA("first-thread");
  }).join();
  auto ev = c.pull();
  REQUIRE(ev.size() == 2);
  CHECK(c.name(ev[0]) == "second-thread");
  CHECK(c.name(ev[1]) == "first-thread");
  CHECK(ev[0].thread == tid);
  CHECK(c.drain.stats().threads == states);  // reused, not a new state
  CHECK(c.drain.stats().unknown_names == 0);
}

TEST_CASE("a domain push still open when its thread exits is counted, not emitted") {
  Collected c;
  uint64_t before = c.drain.stats().open_at_exit;
  std::thread([] {
    nvtxDomainHandle_t d = domainCreateA("exit-test");
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "never-popped";
    domainRangePushEx(d, &a);
  }).join();
  CHECK(c.pull().empty());
  CHECK(c.drain.stats().open_at_exit == before + 1);
}

TEST_CASE("stress: four recording threads, one draining thread, nothing lost or misnamed") {
  Recorder::instance().setRingSlots(1 << 12);
  Collected c;
  uint64_t dropped0 = c.drain.stats().dropped;
  std::atomic<bool> done{false};
  std::vector<TraceEvent> got;
  std::thread drainer([&] {
    while (!done.load()) {
      auto ev = c.drain.drain();
      got.insert(got.end(), ev.begin(), ev.end());
    }
    auto ev = c.drain.drain();
    got.insert(got.end(), ev.begin(), ev.end());
  });
  constexpr int kThreads = 4, kIterations = 20000;
  std::vector<std::thread> workers;
  std::vector<uint32_t> tids(kThreads);
  for (int k = 0; k < kThreads; ++k) {
    workers.emplace_back([&, k] {
      tids[k] = currentTid();
      std::string names[3] = {"w" + std::to_string(k) + "-a", "w" + std::to_string(k) + "-b", "w" + std::to_string(k) + "-c"};
      for (int i = 0; i < kIterations; ++i) {
        rangePushA(names[i % 3].c_str());
        rangeEnd(rangeStartA(names[(i + 1) % 3].c_str()));
        rangePop();
      }
    });
  }
  for (std::thread& t : workers) t.join();
  done = true;
  drainer.join();
  uint64_t dropped = c.drain.stats().dropped - dropped0;
  std::map<uint32_t, int> depth;
  size_t calls = 0;
  for (const TraceEvent& e : got) {
    if (e.type == EventType::kRangeBegin) ++depth[e.thread];
    if (e.type == EventType::kRangeEnd) CHECK(--depth[e.thread] >= 0);
    if (e.type == EventType::kRangeBegin || e.type == EventType::kRange) {
      std::string n = c.name(e);
      int k = static_cast<int>(std::find(tids.begin(), tids.end(), e.thread) - tids.begin());
      REQUIRE(k < kThreads);
      CHECK(n.rfind("w" + std::to_string(k) + "-", 0) == 0);
    }
    calls += e.type == EventType::kRange ? 2 : 1;  // a start/end range stands for two calls
  }
  for (const auto& [t, d] : depth) CHECK(d == 0);
  // Each drop loses two calls: a push with its pop, a start with its end, or an end with
  // its start (which then stays pending). Pops are never dropped.
  CHECK(calls + 2 * dropped == size_t{kThreads} * kIterations * 4);
  CHECK(c.drain.stats().unknown_names == 0);
}
