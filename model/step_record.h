// StepRecord: what one rank reports for one training step (DESIGN.md §3), and the
// per-session facts that travel once (rank topology, dictionaries).
// Strings never sit in a StepRecord: kernels, stacks and names are referenced by 64-bit
// ids whose text travels in dictionary entries.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/duration_histogram.h"
#include "model/kernel_signature.h"

namespace argus::model {

// Do not renumber: written to wire and disk. Retired values stay reserved.
enum class Phase : uint8_t {
  kUnknown = 0,
  kForward = 1,
  kBackward = 2,
  kOptimizer = 3,
  kDataLoad = 4,
  kCommunication = 5,
  kOther = 6,
};
const char* phaseName(Phase p);

// Do not renumber: written to wire and disk.
enum class CollectiveOp : uint8_t {
  kOther = 0,
  kAllReduce = 1,
  kAllGather = 2,
  kReduceScatter = 3,
  kBroadcast = 4,
  kReduce = 5,
  kAllToAll = 6,
  kSend = 7,
  kRecv = 8,
  kSendRecv = 9,
  kBarrier = 10,
};
const char* collectiveOpName(CollectiveOp op);

// Do not renumber: written to wire and disk.
enum class EventKind : uint8_t {
  kMarker = 0,
  kNewKernelSignature = 1,  // value: signature
  kRecompile = 2,
  kDroppedEvents = 3,       // value: events dropped since the previous step
};
const char* eventKindName(EventKind k);

// Phase totals of one step, all ns, exact. Index by PhaseColumn.
enum class PhaseColumn : uint8_t {
  kForward = 0,
  kBackward = 1,
  kOptimizer = 2,
  kDataWait = 3,
  kCompute = 4,
  kCommTotal = 5,
  kCommExposed = 6,  // communication not overlapped by compute
  kGpuIdle = 7,      // GPU idle inside the step
  kBubble = 8,       // pipeline bubble: idle between microbatches
  kLaunchGap = 9,    // host-side launch gaps
};
inline constexpr int kPhaseColumnCount = 10;
const char* phaseColumnName(PhaseColumn c);  // "forward_ns", ...

struct KernelStat {
  uint64_t signature = 0;  // kernelSignature(); text in a KernelDictEntry
  Phase phase = Phase::kUnknown;
  uint32_t count = 0;
  int64_t total_ns = 0;    // exact sum of durations
  DurationHistogram hist;  // count() == count
  bool operator==(const KernelStat&) const = default;
};

// Size class of a collective: floor(log2(bytes)) + 1, 0 for zero bytes.
uint8_t sizeClassOf(uint64_t bytes);

struct CollectiveStat {
  CollectiveOp op = CollectiveOp::kOther;
  uint64_t communicator = 0;  // communicator hash (NCCL commHash); 0 if unknown
  uint8_t size_class = 0;
  uint32_t peer_rank = kNoPeer;  // point-to-point peer, kNoPeer for collectives
  uint32_t count = 0;
  uint64_t bytes = 0;
  int64_t total_ns = 0;
  int64_t wait_ns = -1;  // time waiting for a late peer; -1 when the source does not say
  static constexpr uint32_t kNoPeer = 0xffffffffu;
  bool operator==(const CollectiveStat&) const = default;
};

// Effective (algorithm) bandwidth of a collective entry in bytes per second: bytes moved
// over the time spent, both summed over the entry's calls; 0 when either is unknown. Derived,
// not stored: the record keeps the exact inputs.
double effectiveBandwidth(const CollectiveStat& c);
// Time a step's collectives spent moving data: their total minus the time they waited for a
// late peer (all of it where the source gives no wait). A slow link grows it on the ranks
// whose traffic crosses the link; a slow peer does not (the others wait, they do not move).
int64_t commTransferNs(const std::vector<CollectiveStat>& collectives);

struct StackStat {
  uint64_t stack_id = 0;  // text in a StackDictEntry
  uint32_t samples = 0;
  bool operator==(const StackStat&) const = default;
};

struct EventRecord {
  EventKind kind = EventKind::kMarker;
  int64_t ts_ns = 0;
  uint64_t value = 0;
  uint64_t name_id = 0;  // string dictionary id, 0 for none
  bool operator==(const EventRecord&) const = default;
};

// Do not renumber: bit positions in StepRecord::flags.
enum StepFlag : uint32_t {
  kStepInferred = 1u << 0,  // boundaries inferred from the kernel sequence, not markers
  kStepPartial = 1u << 1,   // the source lost events inside this step
  kStepCpuPhases = 1u << 2, // phase columns from CPU ranges: the step had no device activity
};

struct StepRecord {
  uint32_t rank = 0;
  uint64_t step = 0;
  uint16_t attempt = 0;
  int64_t start_ns = 0;  // Unix epoch ns
  int64_t end_ns = 0;
  int64_t iter_ns = 0;   // iteration time (usually end_ns - start_ns)
  uint32_t flags = 0;
  std::array<int64_t, kPhaseColumnCount> phase_ns{};
  std::vector<KernelStat> kernels;          // sorted by (signature, phase)
  std::vector<CollectiveStat> collectives;  // sorted by (op, communicator, size_class, peer)
  std::vector<StackStat> stacks;            // sorted by stack_id
  std::vector<EventRecord> events;          // sorted by ts_ns

  int64_t& phase(PhaseColumn c) { return phase_ns[static_cast<int>(c)]; }
  int64_t phase(PhaseColumn c) const { return phase_ns[static_cast<int>(c)]; }
  // Sorts the lists into their canonical orders (encoders REQUIRE canonical order).
  void canonicalize();
  bool operator==(const StepRecord&) const = default;
};

// Heap and inline bytes a record holds (vectors and histogram buckets): what buffering it
// costs, for the byte budgets of senders and sessions.
size_t memoryBytes(const StepRecord& r);

// Where a rank sits in the job (DESIGN §2). Sizes of 0 mean "not reported".
struct RankTopology {
  uint32_t rank = 0;
  uint32_t world_size = 0;
  std::string host;
  uint32_t local_rank = 0;
  uint32_t device = 0;
  uint32_t tp_rank = 0, tp_size = 0;
  uint32_t pp_rank = 0, pp_size = 0;
  uint32_t dp_rank = 0, dp_size = 0;
  uint32_t cp_rank = 0, cp_size = 0;
  uint32_t ep_rank = 0, ep_size = 0;
  bool operator==(const RankTopology&) const = default;
};

// Dictionary entries: the text behind ids, sent once per session.
struct KernelDictEntry {
  uint64_t signature = 0;
  std::string name;  // normalized
  LaunchGeometry geometry;
  bool operator==(const KernelDictEntry&) const = default;
};
struct StackDictEntry {
  uint64_t stack_id = 0;
  std::vector<std::string> frames;  // leaf first
  bool operator==(const StackDictEntry&) const = default;
};
struct StringDictEntry {
  uint64_t id = 0;
  std::string text;
  bool operator==(const StringDictEntry&) const = default;
};

// Job ids: 1-128 bytes of [A-Za-z0-9._-].
bool isValidJobId(std::string_view job);

}  // namespace argus::model
