// A full event pool and a full record queue: events are refused and counted, nothing
// crashes, and once drained the plugin records again. Its own process: the sizes are set
// before the plugin's first init.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "capture/name_table.h"
#include "capture/nccl/nccl_drain.h"
#include "tests/unit/capture_nccl/nccl_harness.h"

namespace argus::capture::nccl {
namespace {

TEST_CASE("pool exhaustion and queue overflow drop and count; the plugin recovers") {
  PluginOptions po;
  po.pool_events = 64;
  po.queue_records = 16;
  po.sample_period = 1;
  REQUIRE(Plugin::instance().configure(po));
  testing::Harness<5> h;
  REQUIRE(h.init(42) == abi::kSuccess);
  CHECK_FALSE(Plugin::instance().configure(po));  // sizes are fixed from the first init on
  NameTable names;
  DrainOptions o;
  o.sample_period = 1;
  o.max_steps_per_s = UINT64_MAX / 4;
  Drain drain(Plugin::instance(), names, o);

  // 100 operations enqueued, none finished: the first 64 get events, the rest are refused.
  abi::EventDescrV5 d{};
  d.type = abi::kColl;
  d.coll.func = "AllReduce";
  d.coll.count = 8;
  d.coll.datatype = "ncclFloat32";
  d.coll.nChannels = 0;  // published at NCCL's stop
  std::vector<void*> handles;
  for (int i = 0; i < 100; ++i) handles.push_back(h.start(d));
  long live = std::count_if(handles.begin(), handles.end(), [](void* p) { return p != nullptr; });
  CHECK(live == 64);
  PluginCounters c = Plugin::instance().counters();
  CHECK(c.lost_operations == 36);
  // A child of a live operation finds no event either: counted apart.
  abi::EventDescrV5 k{};
  k.type = abi::kKernelCh;
  k.parentObj = handles[0];
  CHECK(h.start(k) == nullptr);
  CHECK(Plugin::instance().counters().lost_children == 1);

  // All 64 finish at once: the queue takes 16, the other 48 are lost.
  for (void* p : handles) h.stop(p);
  CHECK(Plugin::instance().counters().lost_operations == 36 + 48);
  CHECK(drain.dropped() == 36 + 48);
  CHECK(drain.drain().size() == 16);
  drain.drain();  // the second recycle frees what the first one quarantined
  CHECK(Plugin::instance().counters().in_use == 0);

  // Recovered: a normal operation with its children goes through.
  testing::Operation op;
  op.channels = 2;
  op.steps = 2;
  h.run(op);
  auto events = drain.drain();
  REQUIRE(events.size() == 1);
  CHECK(events[0].bytes == op.count * 4);
  CHECK(events[0].wait_ns >= 0);
  h.finalize();
}

}  // namespace
}  // namespace argus::capture::nccl
