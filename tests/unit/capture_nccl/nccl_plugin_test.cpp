// The NCCL profiler plugin driven through its v5 and v4 function tables as NCCL drives them
// (nccl_harness.h), checked on the TraceEvents the collector's Drain makes.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include "capture/name_table.h"
#include "capture/nccl/nccl_drain.h"
#include "tests/unit/capture_nccl/nccl_harness.h"

namespace argus::capture::nccl {
namespace {

using model::CollectiveOp;
using testing::Harness;
using testing::Operation;

DrainOptions every(uint32_t period = 1) {
  DrainOptions o;
  o.sample_period = period;
  o.max_steps_per_s = UINT64_MAX / 4;  // no adaptation in these tests
  o.device = 3;
  return o;
}

std::vector<TraceEvent> drainAll(Drain& d) {
  auto s = d.drain();
  return {s.begin(), s.end()};
}

TEST_CASE("a v5 all-reduce becomes one collective event with op, bytes, communicator, name and GPU span") {
  NameTable names;
  Drain drain(Plugin::instance(), names, every());
  drainAll(drain);
  Harness<5> h;
  REQUIRE(h.init(0xabcdef) == abi::kSuccess);
  CHECK((h.mask & Plugin::kAlwaysMask) == Plugin::kAlwaysMask);
  CHECK((h.mask & Plugin::kApiMask) == Plugin::kApiMask);  // v5: the API events parent the operations
  CHECK((h.mask & Plugin::kSampledMask) == Plugin::kSampledMask);  // period 1: every group
  int64_t before = nvtx::EpochClock::nowNs();
  Operation op;
  op.count = 1000;
  op.datatype = "ncclBfloat16";
  op.kernel_ns = 400'000;
  h.run(op);
  int64_t after = nvtx::EpochClock::nowNs();
  auto events = drainAll(drain);
  REQUIRE(events.size() == 1);
  const TraceEvent& e = events[0];
  CHECK(e.type == EventType::kCollective);
  CHECK(e.op == CollectiveOp::kAllReduce);
  CHECK(e.id == 0xabcdef);
  CHECK(e.bytes == 2000);
  CHECK(e.peer == model::CollectiveStat::kNoPeer);
  CHECK(e.device == 3);
  CHECK(names.text(e.name) == "all_reduce Ring/Simple");
  // The span is the kernel channels' GPU time, on the capture clock: inside the run, and as
  // long as the GPU timestamps say (at least the kernel time the harness spent).
  CHECK(e.start_ns >= before);
  CHECK(e.end_ns <= after);
  CHECK(e.end_ns - e.start_ns >= op.kernel_ns);
  CHECK((e.launch_ns == kNoTime || e.launch_ns <= e.start_ns));
  CHECK(e.wait_ns >= 0);
  NcclStats st = drain.stats();
  CHECK(st.gpu_timed == 1);
  CHECK(st.sampled == 1);
  CHECK(st.gpu_clock_offset_ns >= testing::kGpuClockBehindNs);
  CHECK(h.finalize() == abi::kSuccess);
}

TEST_CASE("the v4 table gives the same event as v5") {
  NameTable names;
  Drain drain(Plugin::instance(), names, every());
  drainAll(drain);
  Harness<4> h;
  REQUIRE(h.init(77) == abi::kSuccess);
  Operation op;
  op.func = "ReduceScatter";
  op.count = 10;
  op.datatype = "ncclInt64";
  op.algo = "Tree";
  op.proto = "LL128";
  h.run(op);
  auto events = drainAll(drain);
  REQUIRE(events.size() == 1);
  CHECK(events[0].op == CollectiveOp::kReduceScatter);
  CHECK(events[0].bytes == 80);
  CHECK(events[0].id == 77);
  CHECK(names.text(events[0].name) == "reduce_scatter Tree/LL128");
  CHECK(events[0].wait_ns >= 0);
  h.finalize();
}

TEST_CASE("wait share: a late peer shows as waiting, a slow network as transfer") {
  NameTable names;
  Drain drain(Plugin::instance(), names, every());
  drainAll(drain);
  Harness<5> h;
  REQUIRE(h.init(5) == abi::kSuccess);
  // Times in ms, so that the scheduling noise of a shared machine stays small beside them.
  Operation late;  // credits from the receiver come late, data arrives late; the wire is quick
  late.channels = 1;
  late.send_step = {0, 8'000'000, 1'000'000, 1 << 20};
  late.recv_step = {0, 0, 8'000'000, 1 << 20};
  Operation slow = late;  // credits on time; the wire is slow both ways
  slow.send_step = {0, 200'000, 8'000'000, 1 << 20};
  slow.recv_step = {0, 0, 8'000'000, 1 << 20};
  // Three of each, judged by the median: a spin descheduled on a loaded machine skews its
  // own operation (the send rate that splits the receive waits is measured on it).
  std::vector<double> late_shares, slow_shares;
  for (int i = 0; i < 3; ++i) {
    h.run(late);
    h.run(slow);
    auto events = drainAll(drain);
    REQUIRE(events.size() == 2);
    auto share = [](const TraceEvent& e) { return static_cast<double>(e.wait_ns) / static_cast<double>(e.end_ns - e.start_ns); };
    late_shares.push_back(share(events[0]));
    slow_shares.push_back(share(events[1]));
  }
  std::sort(late_shares.begin(), late_shares.end());
  std::sort(slow_shares.begin(), slow_shares.end());
  INFO("late peer shares " << late_shares[0] << " " << late_shares[1] << " " << late_shares[2] << ", slow network shares "
                           << slow_shares[0] << " " << slow_shares[1] << " " << slow_shares[2]);
  // Expected 0.88 and 0.01.
  CHECK(late_shares[1] > 0.6);
  CHECK(slow_shares[1] < 0.2);
  h.finalize();
}

TEST_CASE("wait arithmetic: receive waits split at the operation's own send rate") {
  CollectiveRecord r;
  r.steps = 4;
  r.peer_wait_ns = 100;
  r.send_ns = 200;  // 200 ns for 1000 bytes sent
  r.send_bytes = 1000;
  r.recv_wait_ns = 500;  // 1000 bytes received: 200 ns of it transfer, 300 waiting
  r.recv_bytes = 1000;
  r.local_ns = 200;
  // peer = 100 + 300 = 400 of 1000 state ns: 40% of the span.
  CHECK(Drain::waitNs(r, 10'000) == 4'000);
  r.send_bytes = 0;  // receive waits with no send rate: cannot tell
  CHECK(Drain::waitNs(r, 10'000) == -1);
  r.recv_wait_ns = 0;  // sends only: 100 of 500 state ns waiting
  CHECK(Drain::waitNs(r, 10'000) == 2'000);
  r.steps = 0;  // not sampled
  CHECK(Drain::waitNs(r, 10'000) == -1);
}

TEST_CASE("point-to-point: peer and op; a receive alone has no wait share") {
  NameTable names;
  Drain drain(Plugin::instance(), names, every());
  drainAll(drain);
  Harness<5> h;
  REQUIRE(h.init(9) == abi::kSuccess);
  Operation send;
  send.p2p = true;
  send.func = "Send";
  send.peer = 6;
  send.recv = false;
  send.count = 4096;
  send.datatype = "ncclUint8";
  Operation recv = send;
  recv.func = "Recv";
  recv.peer = 2;
  recv.send = false;
  recv.recv = true;
  h.run(send);
  h.run(recv);
  auto events = drainAll(drain);
  REQUIRE(events.size() == 2);
  CHECK(events[0].op == CollectiveOp::kSend);
  CHECK(events[0].peer == 6);
  CHECK(events[0].bytes == 4096);
  CHECK(names.text(events[0].name) == "send");
  CHECK(events[0].wait_ns >= 0);
  CHECK(events[1].op == CollectiveOp::kRecv);
  CHECK(events[1].peer == 2);
  CHECK(events[1].wait_ns == -1);
  h.finalize();
}

TEST_CASE("sampling: proxy events for 1 in N operations, through the mask NCCL reads at group start") {
  NameTable names;
  Harness<5> h;
  REQUIRE(h.init(11) == abi::kSuccess);
  for (uint32_t period : {4u, 0u}) {
    Drain drain(Plugin::instance(), names, every(period));
    drainAll(drain);
    int sampled_groups = 0;
    Operation op;
    op.channels = 1;
    op.steps = 1;
    op.kernel_ns = 0;
    for (int i = 0; i < 40; ++i) {
      auto q = h.enqueue(op);
      if (q.group_mask & abi::kProxyStep) ++sampled_groups;
      h.progress(q, op);
    }
    auto events = drainAll(drain);
    REQUIRE(events.size() == 40);
    long with_wait = std::count_if(events.begin(), events.end(), [](const TraceEvent& e) { return e.wait_ns >= 0; });
    CHECK(with_wait == sampled_groups);
    CHECK(drain.stats().sampled == static_cast<uint64_t>(sampled_groups));
    if (period == 4) CHECK(sampled_groups == 10);
    if (period == 0) CHECK(sampled_groups == 0);
    CHECK(drain.stats().gpu_timed == 40);  // kernel channels are always on
  }
  h.finalize();
}

TEST_CASE("adaptive sampling: a high proxy-step rate lengthens the period, a low one shortens it back") {
  NameTable names;
  DrainOptions o = every(2);
  o.max_steps_per_s = 1;  // any steps at all are too many
  Drain drain(Plugin::instance(), names, o);
  drainAll(drain);
  Harness<5> h;
  REQUIRE(h.init(12) == abi::kSuccess);
  Operation op;
  op.kernel_ns = 0;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 8; ++i) h.run(op);
    testing::spend(110'000'000);
    drain.drain();
  }
  CHECK(Plugin::instance().samplePeriod() > 2);
  // No steps at all for a while: back toward the configured period, never below it.
  for (int round = 0; round < 20; ++round) {
    testing::spend(110'000'000);
    drain.drain();
  }
  CHECK(Plugin::instance().samplePeriod() == 2);
  h.finalize();
}

TEST_CASE("many user threads, a proxy thread per communicator and the collector, all at once: every operation arrives once") {
  NameTable names;
  Drain drain(Plugin::instance(), names, every(2));
  drainAll(drain);
  constexpr int kThreads = 4, kOps = 300;
  std::atomic<int> running{kThreads};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &running] {
      Harness<5> h;
      REQUIRE(h.init(1000 + t) == abi::kSuccess);
      Operation op;
      op.count = static_cast<size_t>(t + 1) * 256;
      op.kernel_ns = 0;
      op.steps = 1;
      // The proxy thread takes each operation as soon as the user thread has enqueued it
      // (NCCL hands it over through its own queue: here a published index).
      std::vector<typename Harness<5>::Enqueued> queued(kOps);
      std::atomic<int> published{0};
      std::thread proxy([&] {
        for (int i = 0; i < kOps; ++i) {
          while (published.load(std::memory_order_acquire) <= i) std::this_thread::yield();
          h.progress(queued[i], op);
        }
      });
      for (int i = 0; i < kOps; ++i) {
        queued[i] = h.enqueue(op);
        published.store(i + 1, std::memory_order_release);
      }
      proxy.join();
      h.finalize();
      running.fetch_sub(1);
    });
  }
  // The collector drains (and recycles events) while the others record.
  std::vector<TraceEvent> all;
  while (running.load() > 0) {
    for (const TraceEvent& e : drain.drain()) all.push_back(e);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (auto& t : threads) t.join();
  for (const TraceEvent& e : drain.drain()) all.push_back(e);
  std::map<uint64_t, int> per_comm;
  REQUIRE(all.size() == size_t{kThreads} * kOps);
  for (const TraceEvent& e : all) {
    ++per_comm[e.id];
    CHECK(e.bytes == (e.id - 1000 + 1) * 256 * 4);
  }
  for (int t = 0; t < kThreads; ++t) CHECK(per_comm[1000 + t] == kOps);
  PluginCounters c = Plugin::instance().counters();
  CHECK(c.lost_operations == 0);
  CHECK(c.late == 0);
}

}  // namespace
}  // namespace argus::capture::nccl
