// TraceEvent: the one in-memory form every capture source produces (CUPTI, NVTX, the NCCL
// profiler plugin, the stack sampler, and the Kineto / Chrome-trace importers), consumed by
// the StepAssembler and kept raw by the FlightRecorder (docs/capture/step-assembler.md).
//
// A plain value (trivially copyable, fixed size): sources fill one on the stack and hand
// it over, so the per-event path copies bytes and never touches strings. Names are dense
// ids into the source's NameTable (capture/name_table.h); 0 means "no name".
// All times are int64 ns on one clock (Unix epoch ns, DESIGN.md §2); sources convert.
#pragma once

#include <cstdint>
#include <type_traits>

#include "model/kernel_signature.h"
#include "model/step_record.h"

namespace argus::capture {

// In-memory only (never written to wire or disk): free to renumber.
enum class EventType : uint8_t {
  kKernel,       // GPU kernel: [start_ns, end_ns) on (device, stream)
  kMemcpy,       // GPU copy: bytes, copy_kind
  kMemset,       // GPU memset: bytes
  kRangeBegin,   // CPU range push on `thread` at start_ns (NVTX-style; end_ns ignored)
  kRangeEnd,     // CPU range pop on `thread` at start_ns (pops the innermost open range)
  kRange,        // complete CPU range [start_ns, end_ns) on `thread` (Chrome "X")
  kMark,         // instant mark at start_ns
  kCollective,   // a collective / p2p operation on a stream: op, communicator, bytes, peer
  kStackSample,  // CPU stack sample of `thread` at start_ns: stack_id
  kLaunch,       // CPU-side launch (cudaLaunchKernel ...) at start_ns on `thread`: correlation
};

enum class CopyKind : uint8_t { kUnknown = 0, kHtoD, kDtoH, kDtoD, kHtoH, kPeer };

inline constexpr int64_t kNoTime = INT64_MIN;  // launch_ns when the source does not know
// kCollective `stream` of a source that knows neither CUPTI's stream id nor the CUDA device
// ordinal of the operation's kernels (the NCCL profiler plugin): it covers NCCL kernels on
// any device and stream that its span overlaps (docs/capture/step-assembler.md).
inline constexpr uint32_t kAnyStream = UINT32_MAX;

struct TraceEvent {
  int64_t start_ns = 0;
  int64_t end_ns = 0;              // == start_ns for instants
  int64_t launch_ns = kNoTime;     // GPU work: CPU time of its launch, when known
  uint64_t id = 0;                 // kKernel: signature (0: the assembler computes it);
                                   // kStackSample: stack id; kCollective: communicator hash
  uint64_t bytes = 0;              // kMemcpy/kMemset/kCollective (and NCCL kernels if known)
  uint32_t name = 0;               // NameTable id of the kernel / range / mark / collective
  uint32_t correlation = 0;        // links kLaunch and GPU work; 0 = none
  uint32_t device = 0;
  uint32_t stream = 0;             // GPU events
  uint32_t thread = 0;             // CPU events; GPU events: the launching thread, 0 = unknown
  uint32_t peer = model::CollectiveStat::kNoPeer;  // kCollective: p2p peer rank
  int64_t wait_ns = -1;            // kCollective: part of [start_ns, end_ns) spent waiting
                                   // for a late peer (CollectiveStat::wait_ns); -1 unknown
  model::LaunchGeometry geometry;  // kKernel (for the kernel dictionary)
  EventType type = EventType::kKernel;
  model::CollectiveOp op = model::CollectiveOp::kOther;  // kCollective
  CopyKind copy_kind = CopyKind::kUnknown;                // kMemcpy

  bool isGpuActivity() const { return type == EventType::kKernel || type == EventType::kMemcpy || type == EventType::kMemset; }
};

static_assert(std::is_trivially_copyable_v<TraceEvent>);
static_assert(sizeof(TraceEvent) <= 104, "keep the event small: the flight recorder rings them");

}  // namespace argus::capture
