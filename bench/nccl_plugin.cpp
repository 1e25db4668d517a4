// bench_nccl_plugin: what the NCCL profiler plugin costs NCCL's threads per event
// (docs/capture/nccl.md, "Cost"), through the v5 function table as NCCL calls it: a Coll
// start + stop on the user thread (the per-operation cost every collective pays), the same
// with its kernel channels (start, KernelChStop, stop each, on the proxy thread), and one
// proxy step's start, state changes and stop (paid by sampled operations only). Batches fit
// the record queue; the Drain empties it between batches, outside the timing, and its cost
// per operation is printed next to them. The machine is shared and noisy: compare ratios.
//
// Usage: bench_nccl_plugin [iterations=1000000]
//        bench_nccl_plugin --callgrind [iterations=20000]   (under bench/callgrind_nccl.sh)
// Prints figures; asserts nothing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "capture/name_table.h"
#include "capture/nccl/nccl_drain.h"
#include "capture/nccl/nccl_plugin.h"
#include "capture/nvtx/epoch_clock.h"

#include "bench/bench_case.h"
#include "bench/callgrind_section.h"

namespace {

using namespace argus::capture;
using namespace argus::capture::nccl;
using Clock = std::chrono::steady_clock;
using argus::bench::Case;
using argus::bench::median;

int g_mask = 0;
void* g_context = nullptr;

void* start(abi::EventDescrV5& d) {
  void* h = nullptr;
  profilerV5().startEvent(g_context, &h, &d);
  return h;
}

abi::EventDescrV5 coll(uint8_t channels) {
  abi::EventDescrV5 d{};
  d.type = abi::kColl;
  d.coll.func = "AllReduce";
  d.coll.count = 1 << 20;
  d.coll.datatype = "ncclBfloat16";
  d.coll.algo = "Ring";
  d.coll.proto = "Simple";
  d.coll.nChannels = channels;
  return d;
}

std::vector<Case> cases() {
  return {
      {"Coll startEvent + stopEvent (user thread, no channels)", "op",
       [](long n) {
         abi::EventDescrV5 d = coll(0);
         for (long i = 0; i < n; ++i) profilerV5().stopEvent(start(d));
       }},
      {"Group start + stop", "group",
       [](long n) {
         abi::EventDescrV5 d{};
         d.type = abi::kGroup;
         for (long i = 0; i < n; ++i) profilerV5().stopEvent(start(d));
       }},
      {"Coll + 2 kernel channels (start, KernelChStop, stop each)", "op",
       [](long n) {
         abi::EventDescrV5 d = coll(2);
         abi::EventStateArgs a{};
         for (long i = 0; i < n; ++i) {
           void* op = start(d);
           profilerV5().stopEvent(op);
           for (int c = 0; c < 2; ++c) {
             abi::EventDescrV5 k{};
             k.type = abi::kKernelCh;
             k.parentObj = op;
             k.kernelCh.channelId = static_cast<uint8_t>(c);
             k.kernelCh.pTimer = 1'000'000 + static_cast<uint64_t>(i);
             void* ch = start(k);
             a.kernelCh.pTimer = 2'000'000 + static_cast<uint64_t>(i);
             profilerV5().recordEventState(ch, abi::kKernelChStop, &a);
             profilerV5().stopEvent(ch);
           }
         }
       }},
      {"ProxyStep start + 3 states + stop (sampled ops only)", "step",
       [](long n) {
         abi::EventDescrV5 d = coll(0);
         void* op = start(d);  // held open by the proxy op below until the batch ends
         abi::EventDescrV5 p{};
         p.type = abi::kProxyOp;
         p.parentObj = op;
         p.proxyOp.pid = ::getpid();
         p.proxyOp.isSend = 1;
         void* proxy = start(p);
         abi::EventStateArgs a{};
         a.proxyStep.transSize = 1 << 19;
         for (long i = 0; i < n; ++i) {
           abi::EventDescrV5 s{};
           s.type = abi::kProxyStep;
           s.parentObj = proxy;
           s.proxyStep.step = static_cast<int>(i);
           void* step = start(s);
           profilerV5().recordEventState(step, abi::kProxyStepSendGpuWait, &a);
           profilerV5().recordEventState(step, abi::kProxyStepSendPeerWait, &a);
           profilerV5().recordEventState(step, abi::kProxyStepSendWait, &a);
           profilerV5().stopEvent(step);
         }
         profilerV5().stopEvent(proxy);
         profilerV5().stopEvent(op);
       }},
      argus::bench::clockReadCase(),
  };
}

}  // namespace

int main(int argc, char** argv) {
  bool callgrind = argc > 1 && std::strcmp(argv[1], "--callgrind") == 0;
  int arg = callgrind ? 2 : 1;
  long n = argc > arg ? std::atol(argv[arg]) : (callgrind ? 20000 : 1000000);
  constexpr long kBatch = 4096;  // fits the queue (and the pool: a step batch holds 2 + kBatch events at most)
  PluginOptions po;
  po.pool_events = 2 * kBatch + 64;
  po.queue_records = 2 * kBatch;
  po.sample_period = 0;
  Plugin::instance().configure(po);
  profilerV5().init(&g_context, 0x1234, &g_mask, "bench", 1, 8, 0, nullptr);
  NameTable names;
  DrainOptions o;
  o.sample_period = 0;
  Drain drain(Plugin::instance(), names, o);
  if (callgrind) {
#if ARGUS_HAVE_CALLGRIND
    for (const Case& c : cases()) {
      for (long done = 0; done < 2 * kBatch; done += kBatch) c.run(kBatch), drain.drain(), drain.drain();  // warm
      long left = n;
      while (left > 0) {  // instrumented in batches that fit the queue; drained outside
        long b = std::min(left, kBatch);
        CALLGRIND_START_INSTRUMENTATION;
        c.run(b);
        CALLGRIND_STOP_INSTRUMENTATION;
        drain.drain();
        drain.drain();
        left -= b;
      }
      CALLGRIND_DUMP_STATS_AT(c.label);
      std::printf("callgrind-case\t%s\t%s\t%ld\n", c.label, c.unit, n);
    }
    return 0;
#else
    std::fprintf(stderr, "bench_nccl_plugin: built without <valgrind/callgrind.h>: --callgrind is unavailable\n");
    return 1;
#endif
  }
  std::printf("bench_nccl_plugin: %ld iterations per case in batches of %ld, drained between batches\n", n, kBatch);
  std::printf("%-58s %5s %9s %9s %13s\n", "case", "per", "best ns", "median ns", "drain ns/op");
  for (const Case& c : cases()) {
    c.run(kBatch);
    drain.drain();
    drain.drain();
    std::vector<double> batch_ns;
    double drain_ns = 0;
    uint64_t events = 0;
    for (long done = 0; done < n; done += kBatch) {
      auto t0 = Clock::now();
      c.run(kBatch);
      auto t1 = Clock::now();
      events += drain.drain().size();
      drain.drain();  // the second recycle frees the batch's events
      auto t2 = Clock::now();
      batch_ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / kBatch);
      drain_ns += std::chrono::duration<double, std::nano>(t2 - t1).count();
    }
    std::printf("%-58s %5s %9.1f %9.1f %13.1f\n", c.label, c.unit, *std::min_element(batch_ns.begin(), batch_ns.end()), median(batch_ns),
                events ? drain_ns / static_cast<double>(events) : 0.0);
  }
  NcclStats s = drain.stats();
  std::printf("operations %llu, drained %llu, lost %llu (pool or queue full), lost children %llu\n",
              static_cast<unsigned long long>(s.plugin.operations), static_cast<unsigned long long>(s.records),
              static_cast<unsigned long long>(s.plugin.lost_operations), static_cast<unsigned long long>(s.plugin.lost_children));
  profilerV5().finalize(g_context);
  return 0;
}
