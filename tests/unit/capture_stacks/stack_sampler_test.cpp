// StackSampler in a process without Python (this test binary): it looks, finds nothing,
// samples nothing, stays on (Python may still come), and its thread starts and stops
// promptly. Its work inside Python processes is python_walk_test's (probe/).
#include "capture/stacks/stack_sampler.h"

#include <doctest/doctest.h>

#include <chrono>
#include <thread>

using namespace argus::capture::stacks;

TEST_CASE("StackSampler without an interpreter: no samples, no dictionary, still on; the thread stops at once") {
  StackSamplerOptions o;
  o.hz = 200;
  std::string logged;
  o.log = [&](std::string_view line) { logged += line; };
  StackSampler s(o);
  CHECK(s.sampleOnce() == 0);
  CHECK(s.stats().ticks == 1);
  s.start();
  // The thread's first round comes at once (waited for: a loaded machine may start the
  // thread late), the next a second later: without Python, not at 200 Hz.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (s.stats().ticks < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // 20 rounds at 200 Hz
  auto t0 = std::chrono::steady_clock::now();
  s.stop();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(500));
  s.stop();  // idempotent

  StackSamplerStats st = s.stats();
  CHECK(st.ticks >= 2);
  CHECK(st.ticks <= 3);  // 3 only when the wait above crossed the one-second mark
  CHECK(st.samples == 0);
  CHECK_FALSE(st.python);
  CHECK_FALSE(st.off);
  CHECK(logged.empty());
  CHECK(s.describe() == "no Python interpreter found yet");
  int entries = 0, events = 0;
  s.drain([&](std::span<const argus::model::StackDictEntry> e) { entries += static_cast<int>(e.size()); },
          [&](const argus::capture::TraceEvent&) { ++events; });
  CHECK(entries == 0);
  CHECK(events == 0);
}

TEST_CASE("StackSampler with hz 0 is off and start() starts nothing") {
  StackSamplerOptions o;
  o.hz = 0;
  StackSampler s(o);
  s.start();
  s.stop();
  CHECK(s.stats().off);
  CHECK(s.stats().ticks == 0);
}
