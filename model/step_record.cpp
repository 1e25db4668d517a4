#include "model/step_record.h"

#include <algorithm>
#include <bit>
#include <tuple>

namespace argus::model {

const char* phaseName(Phase p) {
  switch (p) {
    case Phase::kUnknown: return "unknown";
    case Phase::kForward: return "forward";
    case Phase::kBackward: return "backward";
    case Phase::kOptimizer: return "optimizer";
    case Phase::kDataLoad: return "data_load";
    case Phase::kCommunication: return "communication";
    case Phase::kOther: return "other";
  }
  return "invalid";
}

const char* collectiveOpName(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kOther: return "other";
    case CollectiveOp::kAllReduce: return "all_reduce";
    case CollectiveOp::kAllGather: return "all_gather";
    case CollectiveOp::kReduceScatter: return "reduce_scatter";
    case CollectiveOp::kBroadcast: return "broadcast";
    case CollectiveOp::kReduce: return "reduce";
    case CollectiveOp::kAllToAll: return "all_to_all";
    case CollectiveOp::kSend: return "send";
    case CollectiveOp::kRecv: return "recv";
    case CollectiveOp::kSendRecv: return "send_recv";
    case CollectiveOp::kBarrier: return "barrier";
  }
  return "invalid";
}

const char* eventKindName(EventKind k) {
  switch (k) {
    case EventKind::kMarker: return "marker";
    case EventKind::kNewKernelSignature: return "new_kernel_signature";
    case EventKind::kRecompile: return "recompile";
    case EventKind::kDroppedEvents: return "dropped_events";
  }
  return "invalid";
}

const char* phaseColumnName(PhaseColumn c) {
  switch (c) {
    case PhaseColumn::kForward: return "forward_ns";
    case PhaseColumn::kBackward: return "backward_ns";
    case PhaseColumn::kOptimizer: return "optimizer_ns";
    case PhaseColumn::kDataWait: return "data_wait_ns";
    case PhaseColumn::kCompute: return "compute_ns";
    case PhaseColumn::kCommTotal: return "comm_total_ns";
    case PhaseColumn::kCommExposed: return "comm_exposed_ns";
    case PhaseColumn::kGpuIdle: return "gpu_idle_ns";
    case PhaseColumn::kBubble: return "bubble_ns";
    case PhaseColumn::kLaunchGap: return "launch_gap_ns";
  }
  return "invalid";
}

uint8_t sizeClassOf(uint64_t bytes) {
  // floor(log2(bytes)) + 1 == number of significant bits.
  return static_cast<uint8_t>(std::bit_width(bytes));
}

double effectiveBandwidth(const CollectiveStat& c) {
  if (c.bytes == 0 || c.total_ns <= 0) return 0.0;
  return static_cast<double>(c.bytes) * 1e9 / static_cast<double>(c.total_ns);
}

int64_t commTransferNs(const std::vector<CollectiveStat>& collectives) {
  int64_t sum = 0;
  for (const CollectiveStat& c : collectives) sum += std::max<int64_t>(0, c.total_ns - std::max<int64_t>(0, c.wait_ns));
  return sum;
}

bool isValidJobId(std::string_view job) {
  if (job.empty() || job.size() > 128) return false;
  for (char c : job) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

namespace {

// Sorts unless already sorted (the step assembler emits its kernels in order): a check of
// n - 1 pairs instead of a sort that moves every record, histograms included.
template <typename T, typename Less>
void sortIfNeeded(std::vector<T>& v, Less less) {
  if (!std::is_sorted(v.begin(), v.end(), less)) std::sort(v.begin(), v.end(), less);
}

}  // namespace

void StepRecord::canonicalize() {
  // Full-field orders so that canonicalize() is deterministic even with duplicate keys.
  sortIfNeeded(kernels, [](const KernelStat& a, const KernelStat& b) {
    return std::tie(a.signature, a.phase, a.count, a.total_ns) < std::tie(b.signature, b.phase, b.count, b.total_ns);
  });
  sortIfNeeded(collectives, [](const CollectiveStat& a, const CollectiveStat& b) {
    return std::tie(a.op, a.communicator, a.size_class, a.peer_rank, a.count, a.bytes, a.total_ns, a.wait_ns) <
           std::tie(b.op, b.communicator, b.size_class, b.peer_rank, b.count, b.bytes, b.total_ns, b.wait_ns);
  });
  sortIfNeeded(stacks, [](const StackStat& a, const StackStat& b) { return std::tie(a.stack_id, a.samples) < std::tie(b.stack_id, b.samples); });
  sortIfNeeded(events, [](const EventRecord& a, const EventRecord& b) {
    return std::tie(a.ts_ns, a.kind, a.value, a.name_id) < std::tie(b.ts_ns, b.kind, b.value, b.name_id);
  });
}

size_t memoryBytes(const StepRecord& r) {
  size_t bytes = sizeof(StepRecord) + r.kernels.size() * sizeof(KernelStat) + r.collectives.size() * sizeof(CollectiveStat) +
                 r.stacks.size() * sizeof(StackStat) + r.events.size() * sizeof(EventRecord);
  for (const KernelStat& k : r.kernels) bytes += k.hist.buckets().size() * sizeof(DurationHistogram::Bucket);
  return bytes;
}

}  // namespace argus::model
