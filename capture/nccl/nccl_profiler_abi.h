// The NCCL profiler plugin interface, versions 4 (NCCL 2.27) and 5 (NCCL 2.28), declared
// from NVIDIA's published headers so that Argus builds without NCCL's sources
// (docs/capture/nccl.md). Source: github.com/NVIDIA/nccl, src/include/plugin/nccl_profiler.h
// (event types, state values) and src/include/plugin/profiler/profiler_v4.h, profiler_v5.h
// (structs), as of NCCL 2.28.9; ext-profiler/README.md for the semantics.
//
// Only what Argus reads is named; layouts are fixed by the static_asserts below (x86-64 and
// aarch64 LP64), because NCCL hands us pointers to its own structs: a wrong offset would read
// garbage silently. Everything sits in a namespace of its own so that a translation unit
// that also includes NCCL's headers does not clash; the exported symbols
// (ncclProfiler_v5, ncclProfiler_v4) are C-linkage objects of these types.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace argus::capture::nccl::abi {

// nccl.h's ncclResult_t: an int-sized enum; profiler calls return ncclSuccess, except init,
// whose failure makes NCCL run on without the plugin.
using Result = int;
inline constexpr Result kSuccess = 0;
inline constexpr Result kInternalError = 3;

// ncclDebugLogger_t (level is ncclDebugLogLevel, an int-sized enum).
using DebugLogger = void (*)(int level, unsigned long flags, const char* file, int line, const char* fmt, ...);

// Event type bits: ncclProfilerEventDescr_v*_t::type and the activation mask.
enum EventType : uint32_t {
  kGroup = 1u << 0,
  kColl = 1u << 1,
  kP2p = 1u << 2,
  kProxyOp = 1u << 3,
  kProxyStep = 1u << 4,
  kProxyCtrl = 1u << 5,
  kKernelCh = 1u << 6,
  kNetPlugin = 1u << 7,
  kGroupApi = 1u << 8,      // v5
  kCollApi = 1u << 9,       // v5
  kP2pApi = 1u << 10,       // v5
  kKernelLaunch = 1u << 11, // v5
};

// ncclProfilerEventState_t (one enum shared by v1..v5; values are NCCL's, not renumberable).
enum EventState : int {
  kProxyOpInProgress = 19,     // v4: the ProxyOp states 0-7 are deprecated
  kProxyStepSendGpuWait = 8,   // send: waiting for the local GPU to produce the data
  kProxyStepSendPeerWait = 20, // send (v4+): waiting for the receiver's clear-to-send credit
  kProxyStepSendWait = 9,      // send: posted to the network, waiting for it to complete
  kProxyStepRecvWait = 10,     // recv: posted, waiting for the data to arrive
  kProxyStepRecvFlushWait = 11,// recv: waiting for the flush to GPU memory
  kProxyStepRecvGpuWait = 12,  // recv: waiting for the local GPU to consume the data
  kKernelChStop = 22,          // KernelCh: the kernel finished the channel (args: stop pTimer)
  kGroupStartApiStop = 23,     // GroupApi (v5): ncclGroupStart returned
  kGroupEndApiStart = 24,      // GroupApi (v5): ncclGroupEnd called
};

struct EventDescrV5 {
  uint64_t type;  // one EventType bit
  void* parentObj;
  int rank;
  union {
    struct {
      bool graphCaptured;
      int groupDepth;
    } groupApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graphCaptured;
    } collApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      void* stream;
      bool graphCaptured;
    } p2pApi;
    struct {
      void* stream;
    } kernelLaunch;
    struct {
      uint64_t seqNumber;
      const char* func;
      const void* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
      void* parentGroup;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
      void* parentGroup;
    } p2p;
    struct {
      pid_t pid;  // the process that made the ProxyOp: parentObj is ours only when it is getpid()
      uint8_t channelId;
      int peer;
      int nSteps;
      int chunkSize;
      int isSend;
    } proxyOp;
    struct {
      int step;
    } proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer;  // GPU globaltimer (ns) at the channel's start; 0 when not given
    } kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
  };
};

// v4: the same as v5 with an 8-bit type, without the API events and parentGroup.
struct EventDescrV4 {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      uint64_t seqNumber;
      const char* func;
      const void* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
    } p2p;
    struct {
      pid_t pid;
      uint8_t channelId;
      int peer;
      int nSteps;
      int chunkSize;
      int isSend;
    } proxyOp;
    struct {
      int step;
    } proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer;
    } kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
  };
};

// ncclProfilerEventStateArgs_v4_t and _v5_t have the same layout.
union EventStateArgs {
  struct {
    size_t transSize;  // bytes of the step's transfer
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer;  // GPU globaltimer (ns) at the channel's stop
  } kernelCh;
};

struct ProfilerV5 {
  const char* name;
  Result (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName, int nNodes, int nranks, int rank,
                 DebugLogger logfn);
  Result (*startEvent)(void* context, void** eHandle, EventDescrV5* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, int eState, EventStateArgs* eStateArgs);
  Result (*finalize)(void* context);
};

struct ProfilerV4 {
  const char* name;
  Result (*init)(void** context, int* eActivationMask, const char* commName, uint64_t commHash, int nNodes, int nranks, int rank,
                 DebugLogger logfn);
  Result (*startEvent)(void* context, void** eHandle, EventDescrV4* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, int eState, EventStateArgs* eStateArgs);
  Result (*finalize)(void* context);
};

// The offsets Argus reads, as NCCL lays them out on LP64 targets.
static_assert(sizeof(void*) == 8, "the NCCL profiler ABI is declared for LP64 targets");
static_assert(offsetof(EventDescrV5, parentObj) == 8 && offsetof(EventDescrV5, rank) == 16);
static_assert(offsetof(EventDescrV5, coll.seqNumber) == 24 && offsetof(EventDescrV5, coll.func) == 32);
static_assert(offsetof(EventDescrV5, coll.count) == 56 && offsetof(EventDescrV5, coll.datatype) == 72);
static_assert(offsetof(EventDescrV5, coll.nChannels) == 80 && offsetof(EventDescrV5, coll.algo) == 88);
static_assert(offsetof(EventDescrV5, coll.proto) == 96 && sizeof(EventDescrV5) == 112);
static_assert(offsetof(EventDescrV5, p2p.func) == 24 && offsetof(EventDescrV5, p2p.datatype) == 40);
static_assert(offsetof(EventDescrV5, p2p.count) == 48 && offsetof(EventDescrV5, p2p.peer) == 56);
static_assert(offsetof(EventDescrV5, proxyOp.pid) == 24 && offsetof(EventDescrV5, proxyOp.channelId) == 28);
static_assert(offsetof(EventDescrV5, proxyOp.peer) == 32 && offsetof(EventDescrV5, proxyOp.isSend) == 44);
static_assert(offsetof(EventDescrV5, kernelCh.channelId) == 24 && offsetof(EventDescrV5, kernelCh.pTimer) == 32);
static_assert(offsetof(EventDescrV4, parentObj) == 8 && offsetof(EventDescrV4, coll.func) == 32);
static_assert(offsetof(EventDescrV4, coll.algo) == 88 && offsetof(EventDescrV4, coll.proto) == 96 && sizeof(EventDescrV4) == 104);
static_assert(offsetof(EventDescrV4, p2p.peer) == 56 && offsetof(EventDescrV4, proxyOp.isSend) == 44);
static_assert(offsetof(EventDescrV4, kernelCh.pTimer) == 32);
static_assert(sizeof(EventStateArgs) == 8);
static_assert(sizeof(ProfilerV5) == 48 && sizeof(ProfilerV4) == 48);

}  // namespace argus::capture::nccl::abi
