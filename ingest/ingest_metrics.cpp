// Prometheus text for IngestMetrics (see ingest_metrics.h).
#include "ingest/ingest_metrics.h"

#include "base/prometheus.h"

namespace argus::ingest {

const char* rejectReasonName(RejectReason r) {
  switch (r) {
    case RejectReason::kBadFrame: return "bad_frame";
    case RejectReason::kFrameTooLarge: return "frame_too_large";
    case RejectReason::kProtocolVersion: return "protocol_version";
    case RejectReason::kBadHello: return "bad_hello";
    case RejectReason::kWrongToken: return "wrong_token";
    case RejectReason::kUnknownJob: return "unknown_job";
    case RejectReason::kSequence: return "sequence";
    case RejectReason::kBadRecord: return "bad_record";
    case RejectReason::kStepOrder: return "step_order";
    case RejectReason::kWriteFailed: return "write_failed";
    case RejectReason::kTimeout: return "timeout";
    case RejectReason::kResourceLimit: return "resource_limit";
  }
  return "unknown";
}

void IngestMetrics::observeCommitLatency(uint64_t ns) {
  commit_latency_ns_sum.fetch_add(ns, std::memory_order_relaxed);
  double ms = static_cast<double>(ns) / 1e6;
  size_t i = 0;
  while (i < kCommitLatencyBucketsMs.size() && ms > kCommitLatencyBucketsMs[i]) ++i;
  commit_latency_buckets[i].fetch_add(1, std::memory_order_relaxed);
}

namespace {

using prometheus::metric;

template <typename T>
double load(const std::atomic<T>& a) {
  return static_cast<double>(a.load(std::memory_order_relaxed));
}

}  // namespace

void writePrometheus(const IngestMetrics& m, std::string* out) {
  metric(out, "argus_ingest_sessions_open", "gauge", "Ingest sessions currently connected.", load(m.sessions_open));
  metric(out, "argus_ingest_sessions_total", "counter", "Ingest sessions accepted since start.", load(m.sessions_total));
  metric(out, "argus_ingest_records_total", "counter", "StepRecords committed and acknowledged.", load(m.records));
  metric(out, "argus_ingest_frame_bytes_total", "counter", "Frame bytes received, headers included.", load(m.frame_bytes));
  metric(out, "argus_ingest_record_bytes_total", "counter", "Encoded StepRecord bytes received.", load(m.record_bytes));
  metric(out, "argus_ingest_dictionary_entries_total", "counter", "Dictionary entries committed.", load(m.dictionary_entries));
  metric(out, "argus_ingest_commits_total", "counter", "Group commits (one WAL write each) that succeeded.", load(m.commits));
  metric(out, "argus_ingest_commit_failures_total", "counter", "Group commits the store refused.", load(m.commit_failures));
  metric(out, "argus_ingest_commit_requests_total", "counter", "Session batches folded into group commits.", load(m.commit_requests));
  metric(out, "argus_ingest_inflight_bytes", "gauge", "Bytes received but not yet committed.", load(m.inflight_bytes));
  metric(out, "argus_ingest_backpressure_pauses_total", "counter", "Times a session stopped reading over its byte budget.", load(m.backpressure_pauses));
  metric(out, "argus_ingest_seals_total", "counter", "Periodic seal passes that succeeded.", load(m.seals));
  metric(out, "argus_ingest_seal_failures_total", "counter", "Periodic seal passes that failed.", load(m.seal_failures));
  metric(out, "argus_ingest_head_full_pauses_total", "counter", "Times a session stopped reading because unsealed head data was over --max-head-bytes.",
         load(m.head_full_pauses));
  metric(out, "argus_ingest_forced_seals_total", "counter", "Seal passes run at once because head was over --max-head-bytes.",
         load(m.forced_seals));

  std::array<double, kCommitLatencyBucketsMs.size()> bounds_s;
  for (size_t i = 0; i < bounds_s.size(); ++i) bounds_s[i] = kCommitLatencyBucketsMs[i] / 1000.0;
  std::array<uint64_t, kCommitLatencyBucketsMs.size() + 1> counts;
  for (size_t i = 0; i < counts.size(); ++i) counts[i] = m.commit_latency_buckets[i].load(std::memory_order_relaxed);
  prometheus::histogram(out, "argus_ingest_commit_latency_seconds", "Latency of one group commit (Store::writeGroup).", bounds_s, counts,
                        load(m.commit_latency_ns_sum) / 1e9);

  const char* rejected = "argus_ingest_rejected_sessions_total";
  prometheus::header(out, rejected, "counter", "Sessions closed by the server for bad input, by reason.");
  for (int i = 0; i < kRejectReasonCount; ++i) {
    prometheus::sample(out, rejected, prometheus::label("reason", rejectReasonName(static_cast<RejectReason>(i))), load(m.rejected[static_cast<size_t>(i)]));
  }
}

}  // namespace argus::ingest
