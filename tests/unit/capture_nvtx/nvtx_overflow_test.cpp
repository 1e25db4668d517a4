// Bounds on the training thread: a full ring drops and counts (never blocks), the pop of a
// recorded push always fits, a name definition is dropped together with its event, and
// nesting deeper than 128 per domain is absorbed. Every thread of this executable records
// into a 64-slot ring.
#include <doctest/doctest.h>

#include "capture/nvtx/nvtx_injection.h"
#include "nvtx_test_util.h"

using namespace argus::capture;
using namespace argus::capture::nvtx;
using namespace argus::capture::nvtx::handlers;
using argus::capture::nvtx::testing::Collected;

namespace {
// Before any NVTX call of this process: every thread state gets 64 slots.
const bool kSmallRings = (Recorder::instance().setRingSlots(64), true);

size_t count(const std::vector<TraceEvent>& ev, EventType type) {
  size_t n = 0;
  for (const TraceEvent& e : ev) n += e.type == type;
  return n;
}
}  // namespace

TEST_CASE("a full ring drops and counts; recording resumes once drained") {
  REQUIRE(kSmallRings);
  Collected c;
  uint64_t dropped0 = c.drain.stats().dropped;
  for (int i = 0; i < 100; ++i) markA("tick");
  auto ev = c.pull();
  uint64_t dropped = c.drain.stats().dropped - dropped0;
  CHECK(ev.size() > 50);
  CHECK(ev.size() < 64);
  CHECK(ev.size() + dropped == 100);
  for (int i = 0; i < 10; ++i) markA("tock");
  ev = c.pull();
  CHECK(ev.size() == 10);
  CHECK(c.drain.stats().dropped - dropped0 == dropped);
}

TEST_CASE("a name whose definition does not fit is not remembered: its next use defines it again") {
  Collected c;
  uint64_t dropped0 = c.drain.stats().dropped;
  while (c.drain.stats().dropped == dropped0) markA("filler");  // until the ring is full
  markA("new-name");                                            // dropped along with its definition
  CHECK(c.drain.stats().dropped == dropped0 + 2);
  c.pull();
  markA("new-name");
  auto ev = c.pull();
  REQUIRE(ev.size() == 1);
  CHECK(c.name(ev[0]) == "new-name");
  CHECK(c.drain.stats().unknown_names == 0);
}

TEST_CASE("pops of recorded pushes are never dropped; pops of dropped pushes never recorded") {
  Collected c;
  uint64_t dropped0 = c.drain.stats().dropped;
  for (int i = 0; i < 100; ++i) CHECK(rangePushA("nested") == i);
  for (int i = 99; i >= 0; --i) CHECK(rangePop() == i);
  auto ev = c.pull();
  size_t begins = count(ev, EventType::kRangeBegin), ends = count(ev, EventType::kRangeEnd);
  CHECK(begins > 10);
  CHECK(begins == ends);
  CHECK(c.drain.stats().dropped - dropped0 == 100 - begins);
  // Properly nested: every prefix has at least as many begins as ends.
  int depth = 0;
  for (const TraceEvent& e : ev) {
    depth += e.type == EventType::kRangeBegin ? 1 : -1;
    CHECK(depth >= 0);
  }
  CHECK(depth == 0);
}

TEST_CASE("a domain's nesting deeper than 128 is absorbed and counted") {
  Collected c;
  uint64_t before = c.drain.stats().depth_overflow;
  for (int i = 0; i < 130; ++i) rangePushA(nullptr);  // unnamed: no definitions
  CHECK(c.drain.stats().depth_overflow == before + 2);
  for (int i = 0; i < 130; ++i) rangePop();
  auto ev = c.pull();
  CHECK(count(ev, EventType::kRangeBegin) == count(ev, EventType::kRangeEnd));
  CHECK(rangePop() == -1);  // back to level 0: nothing open
}
