// A one-rank "training job" that plays NCCL 2.27/2.28 for the capture shim's NCCL test:
// it loads the profiler plugin the way NCCL does (dlopen of $NCCL_PROFILER_PLUGIN, dlsym of
// ncclProfiler_v5 or ncclProfiler_v4), initializes one communicator, and per step, inside
// an NVTX `ProfilerStep#i` range, enqueues --ops all-reduces of 2^18 floats with their two
// kernel channels and, when NCCL's activation mask asks for them, proxy steps whose send
// side waits --peer-wait-us for the receiver's credit before a short transfer (a late peer).
//
//   nccl_workload [--steps S] [--ops K] [--peer-wait-us W] [--v4]
//
// Exit codes: 0 done, 3 the plugin could not be loaded or refused init.
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "capture/nccl/nccl_profiler_abi.h"

namespace {

namespace abi = argus::capture::nccl::abi;

int64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}
void spend(int64_t ns) {
  int64_t until = nowNs() + ns;
  while (nowNs() < until) {
  }
}

struct Nccl {
  const abi::ProfilerV5* v5 = nullptr;
  const abi::ProfilerV4* v4 = nullptr;
  int mask = 0;  // NCCL's eActivationMask
  void* context = nullptr;

  // Both descriptor versions carry the fields used here at the same offsets (the ABI
  // header's static_asserts); the v4 type is 8 bits wide.
  void* start(abi::EventDescrV5& d) {
    void* h = nullptr;
    if (v5 != nullptr) {
      v5->startEvent(context, &h, &d);
    } else {
      abi::EventDescrV4 d4;
      std::memset(&d4, 0, sizeof d4);
      std::memcpy(&d4, &d, sizeof d4);
      d4.type = static_cast<uint8_t>(d.type);
      v4->startEvent(context, &h, &d4);
    }
    return h;
  }
  void stop(void* h) {
    if (h != nullptr) (v5 ? v5->stopEvent : v4->stopEvent)(h);
  }
  void state(void* h, int s, abi::EventStateArgs* a) {
    if (h != nullptr) (v5 ? v5->recordEventState : v4->recordEventState)(h, s, a);
  }
};

void allReduce(Nccl& n, int64_t peer_wait_ns) {
  void* api = nullptr;  // v5: the ncclAllReduce call's event parents the operation
  if (n.v5 != nullptr && (__atomic_load_n(&n.mask, __ATOMIC_RELAXED) & abi::kCollApi)) {
    abi::EventDescrV5 a{};
    a.type = abi::kCollApi;
    a.collApi.func = "AllReduce";
    a.collApi.count = size_t{1} << 18;
    a.collApi.datatype = "ncclFloat32";
    api = n.start(a);
    n.stop(api);
  }
  int group_mask = __atomic_load_n(&n.mask, __ATOMIC_RELAXED);  // read at group start
  abi::EventDescrV5 d{};
  d.type = abi::kGroup;
  void* group = n.start(d);
  d = {};
  d.type = abi::kColl;
  d.parentObj = n.v5 != nullptr ? api : group;
  d.coll.func = "AllReduce";
  d.coll.count = size_t{1} << 18;
  d.coll.datatype = "ncclFloat32";
  d.coll.nChannels = 2;
  d.coll.algo = "Ring";
  d.coll.proto = "Simple";
  void* coll = n.start(d);
  n.stop(coll);  // enqueued
  void* channels[2] = {};
  if (group_mask & abi::kKernelCh) {
    for (int c = 0; c < 2; ++c) {
      abi::EventDescrV5 k{};
      k.type = abi::kKernelCh;
      k.parentObj = coll;
      k.kernelCh.channelId = static_cast<uint8_t>(c);
      k.kernelCh.pTimer = static_cast<uint64_t>(nowNs());
      channels[c] = n.start(k);
    }
  }
  if (group_mask & abi::kProxyOp) {
    for (int dir = 0; dir < 2; ++dir) {
      abi::EventDescrV5 p{};
      p.type = abi::kProxyOp;
      p.parentObj = coll;
      p.proxyOp.pid = ::getpid();
      p.proxyOp.peer = 1;
      p.proxyOp.nSteps = 1;
      p.proxyOp.isSend = dir == 0;
      void* op = n.start(p);
      if (group_mask & abi::kProxyStep) {
        abi::EventDescrV5 s{};
        s.type = abi::kProxyStep;
        s.parentObj = op;
        void* step = n.start(s);
        abi::EventStateArgs a{};
        a.proxyStep.transSize = size_t{1} << 20;
        if (dir == 0) {
          n.state(step, abi::kProxyStepSendGpuWait, &a);
          n.state(step, abi::kProxyStepSendPeerWait, &a);
          spend(peer_wait_ns);
          n.state(step, abi::kProxyStepSendWait, &a);
          spend(peer_wait_ns / 10);
        } else {
          n.state(step, abi::kProxyStepRecvWait, &a);
          spend(peer_wait_ns);
          n.state(step, abi::kProxyStepRecvGpuWait, &a);
        }
        n.stop(step);
      }
      n.stop(op);
    }
  }
  for (void* ch : channels) {
    abi::EventStateArgs a{};
    a.kernelCh.pTimer = static_cast<uint64_t>(nowNs());
    n.state(ch, abi::kKernelChStop, &a);
    n.stop(ch);
  }
  n.stop(group);
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 10, ops = 4;
  int64_t peer_wait_ns = 400'000;
  bool v4 = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--steps" && i + 1 < argc) steps = std::atoi(argv[++i]);
    else if (a == "--ops" && i + 1 < argc) ops = std::atoi(argv[++i]);
    else if (a == "--peer-wait-us" && i + 1 < argc) peer_wait_ns = std::atoll(argv[++i]) * 1000;
    else if (a == "--v4") v4 = true;
  }
  const char* path = std::getenv("NCCL_PROFILER_PLUGIN");
  void* lib = path != nullptr ? ::dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  if (lib == nullptr) {
    std::fprintf(stderr, "nccl_workload: cannot load NCCL_PROFILER_PLUGIN=%s\n", path ? path : "(unset)");
    return 3;
  }
  Nccl n;
  abi::Result r;
  if (v4) {
    n.v4 = static_cast<const abi::ProfilerV4*>(::dlsym(lib, "ncclProfiler_v4"));
    r = n.v4 != nullptr ? n.v4->init(&n.context, &n.mask, "world", 0xC0FFEE, 1, 2, 0, nullptr) : abi::kInternalError;
  } else {
    n.v5 = static_cast<const abi::ProfilerV5*>(::dlsym(lib, "ncclProfiler_v5"));
    r = n.v5 != nullptr ? n.v5->init(&n.context, 0xC0FFEE, &n.mask, "world", 1, 2, 0, nullptr) : abi::kInternalError;
  }
  if (r != abi::kSuccess) {
    std::fprintf(stderr, "nccl_workload: the plugin refused init (%d); NCCL would run on without it\n", r);
    return 3;
  }
  for (int s = 0; s < steps; ++s) {
    std::string marker = "ProfilerStep#" + std::to_string(s);
    nvtxRangePushA(marker.c_str());
    spend(200'000);  // compute
    for (int k = 0; k < ops; ++k) allReduce(n, peer_wait_ns);
    nvtxRangePop();
  }
  (v4 ? n.v4->finalize : n.v5->finalize)(n.context);
  return 0;
}
