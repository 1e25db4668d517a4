// What NCCL (or a newer NCCL, or a bug) may hand the plugin beyond the happy path: null
// pointers, unknown names and types, foreign and stale parents, channels that never come.
// Every case: no crash, a null handle where nothing can be recorded, and a counter.
#include <doctest/doctest.h>

#include <vector>

#include "capture/name_table.h"
#include "capture/nccl/descriptor_names.h"
#include "capture/nccl/nccl_drain.h"
#include "tests/unit/capture_nccl/nccl_harness.h"

namespace argus::capture::nccl {
namespace {

using model::CollectiveOp;
using testing::Harness;

std::vector<TraceEvent> drainAll(Drain& d) {
  auto s = d.drain();
  return {s.begin(), s.end()};
}

DrainOptions options() {
  DrainOptions o;
  o.sample_period = 1;
  o.max_steps_per_s = UINT64_MAX / 4;
  return o;
}

TEST_CASE("descriptor names: NCCL's spellings, null and unknown strings") {
  CHECK(opOfFunc("AllReduce") == CollectiveOp::kAllReduce);
  CHECK(opOfFunc("AlltoAll") == CollectiveOp::kAllToAll);
  CHECK(opOfFunc("SendRecv") == CollectiveOp::kSendRecv);
  CHECK(opOfFunc(nullptr) == CollectiveOp::kOther);
  CHECK(opOfFunc("allreduce") == CollectiveOp::kOther);  // NCCL's names are exact
  CHECK(bytesOfDatatype("ncclFloat8e4m3") == 1);
  CHECK(bytesOfDatatype("ncclFloat64") == 8);
  CHECK(bytesOfDatatype(nullptr) == 0);
  CHECK(bytesOfDatatype("ncclComplex") == 0);
  CHECK(std::string(algoName(algoIndex("NVLSTree"))) == "NVLSTree");
  CHECK(algoIndex("Frob") == 0);
  CHECK(std::string(protoName(protoIndex("LL128"))) == "LL128");
  CHECK(protoIndex(nullptr) == 0);
  CHECK(std::string(algoName(200)).empty());
}

TEST_CASE("init refuses null pointers; events need a context and a descriptor") {
  void* ctx = nullptr;
  CHECK(profilerV5().init(nullptr, 1, &testing::g_activation_mask, "c", 1, 2, 0, nullptr) != abi::kSuccess);
  CHECK(profilerV5().init(&ctx, 1, nullptr, "c", 1, 2, 0, nullptr) != abi::kSuccess);
  Harness<5> h;
  REQUIRE(h.init(1) == abi::kSuccess);
  void* handle = reinterpret_cast<void*>(1);
  CHECK(profilerV5().startEvent(h.context, &handle, nullptr) == abi::kSuccess);
  CHECK(handle == nullptr);
  CHECK(profilerV5().startEvent(h.context, nullptr, nullptr) == abi::kSuccess);
  abi::EventDescrV5 d{};
  d.type = abi::kColl;
  CHECK(profilerV5().startEvent(nullptr, &handle, &d) == abi::kSuccess);
  CHECK(handle == nullptr);
  CHECK(profilerV5().stopEvent(nullptr) == abi::kSuccess);
  CHECK(profilerV5().recordEventState(nullptr, abi::kProxyStepSendWait, nullptr) == abi::kSuccess);
  CHECK(profilerV5().finalize(nullptr) == abi::kSuccess);
  h.finalize();
}

TEST_CASE("null and unknown strings, zero counts, a negative peer: an event with what is known") {
  NameTable names;
  Drain drain(Plugin::instance(), names, options());
  drainAll(drain);
  Harness<5> h;
  REQUIRE(h.init(2) == abi::kSuccess);
  NcclStats before = drain.stats();
  testing::Operation op;
  op.func = nullptr;
  op.datatype = nullptr;
  op.algo = nullptr;
  op.proto = nullptr;
  h.run(op);
  op.func = "Frobnicate";
  op.datatype = "ncclComplex128";
  h.run(op);
  op.func = "AllGather";
  op.datatype = "ncclInt8";
  op.count = 0;
  h.run(op);
  testing::Operation p2p;
  p2p.p2p = true;
  p2p.func = "Send";
  p2p.peer = -5;
  h.run(p2p);
  auto events = drainAll(drain);
  REQUIRE(events.size() == 4);
  CHECK(events[0].op == CollectiveOp::kOther);
  CHECK(events[0].bytes == 0);
  CHECK(names.text(events[0].name) == "other");
  CHECK(events[1].op == CollectiveOp::kOther);
  CHECK(events[1].bytes == 0);
  CHECK(names.text(events[1].name) == "other");  // algo and proto still null
  CHECK(events[2].op == CollectiveOp::kAllGather);
  CHECK(events[2].bytes == 0);
  CHECK(events[3].op == CollectiveOp::kSend);
  CHECK(events[3].peer == model::CollectiveStat::kNoPeer);
  NcclStats after = drain.stats();
  CHECK(after.unknown_ops - before.unknown_ops == 2);
  CHECK(after.unknown_bytes - before.unknown_bytes == 3);
  h.finalize();
}

TEST_CASE("foreign, stale and wrong-kind parents are orphans; unknown types are ignored") {
  NameTable names;
  Drain drain(Plugin::instance(), names, options());
  drainAll(drain);
  Harness<5> h;
  REQUIRE(h.init(3) == abi::kSuccess);
  PluginCounters before = Plugin::instance().counters();
  testing::Operation spec;
  spec.channels = 1;
  auto q = h.enqueue(spec);  // open: its kernel channel has not stopped
  REQUIRE(q.op != nullptr);

  abi::EventDescrV5 d{};
  d.type = abi::kProxyOp;
  d.parentObj = q.op;
  d.proxyOp.pid = ::getpid() + 1;  // PXN: made by another process
  CHECK(h.start(d) == nullptr);
  int garbage[64] = {};
  d.proxyOp.pid = ::getpid();
  d.parentObj = garbage;  // not one of our events
  CHECK(h.start(d) == nullptr);
  d = {};
  d.type = abi::kProxyStep;
  d.parentObj = q.op;  // a step's parent must be a ProxyOp
  CHECK(h.start(d) == nullptr);
  d = {};
  d.type = abi::kKernelCh;
  d.parentObj = nullptr;
  CHECK(h.start(d) == nullptr);
  PluginCounters mid = Plugin::instance().counters();
  CHECK(mid.orphans - before.orphans == 4);

  for (uint64_t type : {uint64_t{abi::kProxyCtrl}, uint64_t{abi::kNetPlugin}, uint64_t{abi::kKernelLaunch}, uint64_t{0},
                        uint64_t{1} << 30, uint64_t{1} << 40}) {
    d = {};
    d.type = type;
    d.parentObj = q.op;
    CHECK(h.start(d) == nullptr);
  }
  CHECK(Plugin::instance().counters().ignored - mid.ignored == 6);

  // States that do not belong to the event, or come without arguments: ignored.
  h.state(q.group, abi::kKernelChStop, nullptr);
  h.state(q.op, abi::kProxyStepSendWait, nullptr);
  h.progress(q, spec);
  auto events = drainAll(drain);
  REQUIRE(events.size() == 1);
  CHECK(events[0].op == CollectiveOp::kAllReduce);
  h.finalize();
}

TEST_CASE("a child after its operation was published is late: counted, not attached") {
  NameTable names;
  Drain drain(Plugin::instance(), names, options());
  drainAll(drain);
  Harness<5> h;
  REQUIRE(h.init(4) == abi::kSuccess);
  testing::Operation spec;
  spec.channels = 0;  // no kernel channel to wait for: published at NCCL's stop
  auto q = h.enqueue(spec);
  PluginCounters before = Plugin::instance().counters();
  abi::EventDescrV5 d{};
  d.type = abi::kProxyOp;
  d.parentObj = q.op;  // retired, not yet recycled: still recognizably ours
  d.proxyOp.pid = ::getpid();
  CHECK(h.start(d) == nullptr);
  CHECK(Plugin::instance().counters().late - before.late == 1);
  CHECK(drainAll(drain).size() == 1);
  h.finalize();
}

TEST_CASE("an operation whose announced kernel channels never all stop is published after stuck_ns") {
  NameTable names;
  DrainOptions o = options();
  o.stuck_ns = 20'000'000;
  Drain drain(Plugin::instance(), names, o);
  drainAll(drain);
  Harness<5> h;
  REQUIRE(h.init(5) == abi::kSuccess);
  testing::Operation spec;
  spec.channels = 3;  // announced; only one channel will report
  auto q = h.enqueue(spec);
  abi::EventDescrV5 d{};
  d.type = abi::kKernelCh;
  d.parentObj = q.op;
  uint64_t t0 = testing::gpuNow();
  d.kernelCh.pTimer = t0;
  void* ch = h.start(d);
  REQUIRE(ch != nullptr);
  abi::EventStateArgs a{};
  a.kernelCh.pTimer = t0 + 1000;
  h.state(ch, abi::kKernelChStop, &a);
  h.stop(ch);
  h.stop(q.group);
  CHECK(drainAll(drain).empty());
  PluginCounters before = Plugin::instance().counters();
  testing::spend(30'000'000);
  drain.drain();  // the sweep publishes it into the queue
  auto events = drainAll(drain);
  REQUIRE(events.size() == 1);
  CHECK(events[0].end_ns - events[0].start_ns == 1000);  // the one channel's GPU time
  CHECK(Plugin::instance().counters().forced - before.forced == 1);
  h.finalize();
}

}  // namespace
}  // namespace argus::capture::nccl
