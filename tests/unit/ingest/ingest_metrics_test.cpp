// IngestMetrics: Prometheus text.
#include <doctest/doctest.h>

#include "ingest/ingest_metrics.h"

using namespace argus::ingest;

TEST_CASE("metrics text has every counter, the latency histogram and reject reasons") {
  IngestMetrics m;
  m.sessions_open = 3;
  m.records = 12345;
  m.reject(RejectReason::kWrongToken);
  m.reject(RejectReason::kWrongToken);
  m.observeCommitLatency(300'000);     // 0.3 ms -> le 0.0005
  m.observeCommitLatency(5'000'000'000);  // 5 s -> +Inf only
  std::string out;
  writePrometheus(m, &out);
  CHECK(out.find("argus_ingest_sessions_open 3\n") != std::string::npos);
  CHECK(out.find("argus_ingest_records_total 12345\n") != std::string::npos);
  CHECK(out.find("# TYPE argus_ingest_records_total counter") != std::string::npos);
  CHECK(out.find("argus_ingest_rejected_sessions_total{reason=\"wrong_token\"} 2\n") != std::string::npos);
  CHECK(out.find("argus_ingest_rejected_sessions_total{reason=\"timeout\"} 0\n") != std::string::npos);
  CHECK(out.find("argus_ingest_commit_latency_seconds_bucket{le=\"0.00025\"} 0\n") != std::string::npos);
  CHECK(out.find("argus_ingest_commit_latency_seconds_bucket{le=\"0.0005\"} 1\n") != std::string::npos);
  CHECK(out.find("argus_ingest_commit_latency_seconds_bucket{le=\"1\"} 1\n") != std::string::npos);
  CHECK(out.find("argus_ingest_commit_latency_seconds_bucket{le=\"+Inf\"} 2\n") != std::string::npos);
  CHECK(out.find("argus_ingest_commit_latency_seconds_count 2\n") != std::string::npos);
  for (int i = 0; i < kRejectReasonCount; ++i) {
    CHECK(std::string(rejectReasonName(static_cast<RejectReason>(i))) != "unknown");
  }
}
