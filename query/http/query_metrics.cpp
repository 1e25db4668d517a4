#include "query/http/query_metrics.h"

#include <chrono>

#include "base/prometheus.h"
#include "query/common/errors.h"

namespace argus::query {

QueryResult QueryMetrics::run(const storage::Store& store, std::string_view sql, const QueryOptions& options) {
  auto start = std::chrono::steady_clock::now();
  started_.fetch_add(1, std::memory_order_relaxed);
  running_.fetch_add(1, std::memory_order_relaxed);
  struct Finished {
    std::atomic<uint64_t>& running;
    ~Finished() { running.fetch_sub(1, std::memory_order_relaxed); }
  } finished{running_};  // whatever ends the query, bad_alloc included
  auto elapsed = [&] { return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count(); };
  try {
    QueryResult result = QueryEngine(store).run(sql, options);
    observe(elapsed(), kOk);
    return result;
  } catch (const QueryError& e) {
    Outcome outcome = e.kind() == QueryError::Kind::kParser   ? kParserError
                      : e.kind() == QueryError::Kind::kBinder ? kBinderError
                                                              : kExecutionError;
    observe(elapsed(), outcome);
    throw;
  }
}

void QueryMetrics::observe(int64_t ns, Outcome outcome) {
  duration_ns_sum_.fetch_add(static_cast<uint64_t>(ns), std::memory_order_relaxed);
  double seconds = static_cast<double>(ns) / 1e9;
  size_t i = 0;
  while (i < kQueryDurationBucketsS.size() && seconds > kQueryDurationBucketsS[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  outcomes_[outcome].fetch_add(1, std::memory_order_relaxed);
}

void QueryMetrics::write(std::string* out) const {
  std::array<uint64_t, kQueryDurationBucketsS.size() + 1> counts;
  for (size_t i = 0; i < counts.size(); ++i) counts[i] = buckets_[i].load(std::memory_order_relaxed);
  prometheus::histogram(out, "argus_query_duration_seconds", "Wall time of queries run over HTTP (/api/v1/query and Grafana).",
                        kQueryDurationBucketsS, counts, static_cast<double>(duration_ns_sum_.load(std::memory_order_relaxed)) / 1e9);

  const char* outcomes = "argus_query_outcomes_total";
  prometheus::header(out, outcomes, "counter", "Queries run over HTTP, by outcome.");
  static constexpr const char* kNames[kOutcomes] = {"ok", "parser_error", "binder_error", "execution_error"};
  for (size_t i = 0; i < kOutcomes; ++i) {
    prometheus::sample(out, outcomes, prometheus::label("outcome", kNames[i]),
                       static_cast<double>(outcomes_[i].load(std::memory_order_relaxed)));
  }
  prometheus::metric(out, "argus_queries_running", "gauge", "Queries run over HTTP that have started and not finished.",
                     static_cast<double>(running_.load(std::memory_order_relaxed)));
}

}  // namespace argus::query
