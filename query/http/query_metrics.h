// QueryMetrics: every query the HTTP surface runs (POST /api/v1/query and the Grafana
// datasource) goes through run(), which times it and counts its outcome for /metrics:
//   argus_query_duration_seconds        histogram of wall time (docs/http/api.md, "/metrics")
//   argus_query_outcomes_total{outcome} ok | parser_error | binder_error | execution_error
//   argus_queries_running               gauge: queries started and not yet finished
// Thread-safe: relaxed atomics, as the ingest counters.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "query/engine.h"

namespace argus::query {

// Upper bounds (seconds) of the query duration buckets; +Inf is implied.
inline constexpr std::array<double, 12> kQueryDurationBucketsS = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30};

class QueryMetrics {
 public:
  // Runs `sql` on `store`; records its wall time and outcome, then returns the result or
  // rethrows the QueryError.
  QueryResult run(const storage::Store& store, std::string_view sql, const QueryOptions& options);
  // Appends the histogram and outcome counters in Prometheus text format.
  void write(std::string* out) const;
  // Statements started so far, and those still running.
  uint64_t started() const { return started_.load(std::memory_order_relaxed); }
  uint64_t running() const { return running_.load(std::memory_order_relaxed); }

 private:
  enum Outcome : size_t { kOk, kParserError, kBinderError, kExecutionError, kOutcomes };
  void observe(int64_t ns, Outcome outcome);

  std::array<std::atomic<uint64_t>, kQueryDurationBucketsS.size() + 1> buckets_{};
  std::atomic<uint64_t> duration_ns_sum_{0};
  std::array<std::atomic<uint64_t>, kOutcomes> outcomes_{};
  std::atomic<uint64_t> started_{0}, running_{0};
};

}  // namespace argus::query
