// IngestMetrics: argusd's ingest counters, read by the HTTP /metrics endpoint (query/).
// Plain atomics, updated with relaxed ordering by sessions and the committer; readers see
// each counter's latest value (no cross-counter consistency is promised).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace argus::ingest {

// Why a session was closed by the server. Do not renumber: exported as metric labels.
enum class RejectReason : uint8_t {
  kBadFrame = 0,         // undecodable frame, random bytes, truncated message
  kFrameTooLarge = 1,    // length prefix over --max-frame-bytes
  kProtocolVersion = 2,  // Hello.protocolVersion or encoding unsupported
  kBadHello = 3,         // first message not a Hello, second Hello, invalid job id
  kWrongToken = 4,
  kUnknownJob = 5,       // job not in the auth file
  kSequence = 6,         // StepBatch firstSeq not contiguous
  kBadRecord = 7,        // record does not decode, or rank differs from Hello's
  kStepOrder = 8,        // out-of-order or duplicate step within a session
  kWriteFailed = 9,      // the store refused the commit
  kTimeout = 10,         // no Hello in time, or a started frame not completed in time
  kResourceLimit = 11,   // too many sessions, or a batch decoding past the session's budget
};
inline constexpr int kRejectReasonCount = 12;
const char* rejectReasonName(RejectReason r);  // "bad_frame", ...

// Upper bounds (ms) of the commit latency histogram buckets; +Inf is implied.
inline constexpr std::array<double, 12> kCommitLatencyBucketsMs = {0.25, 0.5, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000};

struct IngestMetrics {
  std::atomic<int64_t> sessions_open{0};
  std::atomic<uint64_t> sessions_total{0};
  std::atomic<uint64_t> records{0};             // records committed (and so acknowledged)
  std::atomic<uint64_t> frame_bytes{0};         // frame bytes received, headers included
  std::atomic<uint64_t> record_bytes{0};        // encoded StepRecord bytes received
  std::atomic<uint64_t> dictionary_entries{0};  // committed
  std::atomic<uint64_t> commits{0};             // group commits (Store::writeGroup calls) that succeeded
  std::atomic<uint64_t> commit_failures{0};
  std::atomic<uint64_t> commit_requests{0};     // session batches folded into those commits
  std::atomic<uint64_t> commit_latency_ns_sum{0};
  std::array<std::atomic<uint64_t>, kCommitLatencyBucketsMs.size() + 1> commit_latency_buckets{};
  std::atomic<int64_t> inflight_bytes{0};       // queued but not yet committed
  std::atomic<uint64_t> backpressure_pauses{0}; // times a session stopped reading
  std::atomic<uint64_t> seals{0};
  std::atomic<uint64_t> seal_failures{0};
  std::atomic<uint64_t> head_full_pauses{0};  // times a session stopped reading: head over its limit
  std::atomic<uint64_t> forced_seals{0};      // seal passes run because head was over its limit
  std::array<std::atomic<uint64_t>, kRejectReasonCount> rejected{};

  void reject(RejectReason r) { rejected[static_cast<size_t>(r)].fetch_add(1, std::memory_order_relaxed); }
  void observeCommitLatency(uint64_t ns);
};

// Appends the metrics in Prometheus text exposition format (names argus_ingest_*).
void writePrometheus(const IngestMetrics& metrics, std::string* out);

}  // namespace argus::ingest
