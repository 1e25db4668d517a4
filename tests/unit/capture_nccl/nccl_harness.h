// NcclHarness: plays NCCL's side of the profiler plugin interface for the tests, calling the
// v5 or v4 function table in the order NCCL 2.27/2.28 does (ext-profiler/README.md, and
// src/misc/profiler.cc of NCCL): init per communicator with the address of NCCL's activation
// mask; per group, the mask read once at group start, a Group event, a Coll / P2p event
// (stopped as soon as it is enqueued), then on the "proxy thread" the KernelCh events of its
// channels and, if the group's mask had them, a ProxyOp per channel with its ProxyStep
// children going through their states; finalize at the end. Time in each step state is real
// time spent (the plugin reads the clock itself).
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

#include "capture/nccl/nccl_plugin.h"
#include "capture/nvtx/epoch_clock.h"

namespace argus::capture::nccl::testing {

// Spends `ns` of wall time (busy: sleeping would overshoot by scheduler slices).
inline void spend(int64_t ns) {
  int64_t until = nvtx::EpochClock::nowNs() + ns;
  while (nvtx::EpochClock::nowNs() < until) {
  }
}

// A GPU globaltimer that differs from the capture clock by a fixed offset.
inline constexpr int64_t kGpuClockBehindNs = 3'000'000'000;
inline uint64_t gpuNow() {
  return static_cast<uint64_t>(nvtx::EpochClock::nowNs() - kGpuClockBehindNs);
}

// One step's script: time in each state, in NCCL's order. 0 skips the state.
struct StepScript {
  int64_t gpu_wait_ns = 0;   // SendGPUWait / RecvGPUWait
  int64_t peer_wait_ns = 0;  // SendPeerWait (send) — the receiver's credit is late
  int64_t wire_ns = 0;       // SendWait (send) / RecvWait (recv)
  size_t bytes = 1 << 20;    // transSize
};

struct Operation {
  bool p2p = false;
  const char* func = "AllReduce";
  size_t count = 1 << 20;
  const char* datatype = "ncclFloat32";
  const char* algo = "Ring";
  const char* proto = "Simple";
  int peer = -1;
  int channels = 2;
  int steps = 2;            // per channel per direction
  bool send = true;         // proxy ops that send
  bool recv = true;         // proxy ops that receive
  StepScript send_step, recv_step;
  int64_t kernel_ns = 200'000;  // per channel, between the KernelCh start and its stop pTimer
};

// NCCL's eActivationMask: one per process, shared by every communicator.
inline int g_activation_mask = 0;

template <int kVersion>
struct Harness {
  using Descr = std::conditional_t<kVersion == 5, abi::EventDescrV5, abi::EventDescrV4>;
  int& mask = g_activation_mask;
  void* context = nullptr;

  abi::Result init(uint64_t comm_hash, int nranks = 8, int rank = 0) {
    if constexpr (kVersion == 5) return profilerV5().init(&context, comm_hash, &mask, "comm", 1, nranks, rank, nullptr);
    else return profilerV4().init(&context, &mask, "comm", comm_hash, 1, nranks, rank, nullptr);
  }
  abi::Result finalize() {
    if constexpr (kVersion == 5) return profilerV5().finalize(context);
    else return profilerV4().finalize(context);
  }
  void* start(Descr& d) {
    void* h = nullptr;
    if constexpr (kVersion == 5) profilerV5().startEvent(context, &h, &d);
    else profilerV4().startEvent(context, &h, &d);
    return h;
  }
  // NCCL skips null handles.
  void stop(void* h) {
    if (h == nullptr) return;
    if constexpr (kVersion == 5) profilerV5().stopEvent(h);
    else profilerV4().stopEvent(h);
  }
  void state(void* h, int s, abi::EventStateArgs* args = nullptr) {
    if (h == nullptr) return;
    if constexpr (kVersion == 5) profilerV5().recordEventState(h, s, args);
    else profilerV4().recordEventState(h, s, args);
  }

  // Enqueues `op` on the calling (user) thread; returns the operation's handle and the
  // group mask NCCL read, for run() to play the proxy side.
  struct Enqueued {
    void* group = nullptr;
    void* op = nullptr;
    int group_mask = 0;
  };
  // v5 first reports the API calls (ncclGroupStart, ncclAllReduce ...: GroupApi with its
  // CollApi / P2pApi child, stopped when the call returns); the operation's parent is then
  // its API event. v4 parents it with the Group.
  Enqueued enqueue(const Operation& op) {
    Enqueued q;
    void* api = nullptr;
    void* group_api = nullptr;
    if constexpr (kVersion == 5) {
      int api_mask = __atomic_load_n(&mask, __ATOMIC_RELAXED);
      if (api_mask & abi::kGroupApi) {
        Descr g{};
        g.type = abi::kGroupApi;
        g.groupApi.groupDepth = 1;
        group_api = start(g);
      }
      if (api_mask & (op.p2p ? abi::kP2pApi : abi::kCollApi)) {
        Descr a{};
        a.type = op.p2p ? abi::kP2pApi : abi::kCollApi;
        a.parentObj = group_api;
        a.collApi.func = op.func;
        a.collApi.count = op.count;
        a.collApi.datatype = op.datatype;
        api = start(a);
        stop(api);
      }
      state(group_api, abi::kGroupEndApiStart);
    }
    q.group_mask = __atomic_load_n(&mask, __ATOMIC_RELAXED);
    if (q.group_mask & (abi::kColl | abi::kP2p | abi::kProxyOp | abi::kProxyStep)) {
      Descr g{};
      g.type = abi::kGroup;
      q.group = start(g);
    }
    Descr d{};
    d.parentObj = kVersion == 5 ? api : q.group;
    d.rank = 0;
    if (!op.p2p && (q.group_mask & abi::kColl)) {
      d.type = abi::kColl;
      d.coll.seqNumber = 1;
      d.coll.func = op.func;
      d.coll.count = op.count;
      d.coll.datatype = op.datatype;
      d.coll.nChannels = static_cast<uint8_t>(op.channels);
      d.coll.algo = op.algo;
      d.coll.proto = op.proto;
      q.op = start(d);
    } else if (op.p2p && (q.group_mask & abi::kP2p)) {
      d.type = abi::kP2p;
      d.p2p.func = op.func;
      d.p2p.count = op.count;
      d.p2p.datatype = op.datatype;
      d.p2p.peer = op.peer;
      d.p2p.nChannels = static_cast<uint8_t>(op.channels);
      q.op = start(d);
    }
    stop(q.op);  // NCCL stops Coll / P2p events once enqueued
    stop(group_api);
    return q;
  }

  // The proxy thread's part of an enqueued operation: kernel channels and proxy steps.
  void progress(const Enqueued& q, const Operation& op) {
    std::vector<void*> channels;
    if (q.group_mask & abi::kKernelCh) {
      for (int c = 0; c < op.channels; ++c) {
        Descr d{};
        d.type = abi::kKernelCh;
        d.parentObj = q.op;
        d.kernelCh.channelId = static_cast<uint8_t>(c);
        d.kernelCh.pTimer = gpuNow();
        channels.push_back(start(d));
      }
    }
    if (q.group_mask & abi::kProxyOp) {
      for (int c = 0; c < op.channels; ++c) {
        for (int dir = 0; dir < 2; ++dir) {
          bool send = dir == 0;
          if ((send && !op.send) || (!send && !op.recv)) continue;
          Descr d{};
          d.type = abi::kProxyOp;
          d.parentObj = q.op;
          d.proxyOp.pid = ::getpid();
          d.proxyOp.channelId = static_cast<uint8_t>(c);
          d.proxyOp.peer = 1;
          d.proxyOp.nSteps = op.steps;
          d.proxyOp.chunkSize = 1 << 20;
          d.proxyOp.isSend = send;
          void* pop = start(d);
          state(pop, abi::kProxyOpInProgress);
          for (int s = 0; s < op.steps; ++s) runStep(pop, s, send, send ? op.send_step : op.recv_step, q.group_mask);
          stop(pop);
        }
      }
    }
    for (void* ch : channels) {
      abi::EventStateArgs a{};
      spend(op.kernel_ns / (op.channels > 0 ? op.channels : 1));
      a.kernelCh.pTimer = gpuNow();
      state(ch, abi::kKernelChStop, &a);
      stop(ch);
    }
    stop(q.group);
  }

  void runStep(void* proxy_op, int step, bool send, const StepScript& s, int group_mask) {
    if (!(group_mask & abi::kProxyStep)) return;
    Descr d{};
    d.type = abi::kProxyStep;
    d.parentObj = proxy_op;
    d.proxyStep.step = step;
    void* h = start(d);
    abi::EventStateArgs a{};
    a.proxyStep.transSize = s.bytes;
    if (send) {
      state(h, abi::kProxyStepSendGpuWait, &a);
      spend(s.gpu_wait_ns);
      state(h, abi::kProxyStepSendPeerWait, &a);
      spend(s.peer_wait_ns);
      state(h, abi::kProxyStepSendWait, &a);
      spend(s.wire_ns);
    } else {
      state(h, abi::kProxyStepRecvWait, &a);
      spend(s.wire_ns);
      state(h, abi::kProxyStepRecvFlushWait, &a);
      state(h, abi::kProxyStepRecvGpuWait, &a);
      spend(s.gpu_wait_ns);
    }
    stop(h);
  }

  // enqueue + progress on one thread.
  void run(const Operation& op) { progress(enqueue(op), op); }
};

}  // namespace argus::capture::nccl::testing
