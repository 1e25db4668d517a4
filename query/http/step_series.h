// Step series: a step metric (a duration column of the steps table) of one job as Grafana
// time series, per rank or aggregated across ranks, each step placed at its start time
// (steps.start_ns). Runs as query-language statements through QueryMetrics, so the usual
// deadline and memory cap apply and /metrics counts them. docs/http/grafana.md, "Step metrics".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "query/http/query_metrics.h"

namespace argus::query {

enum class StepAggregate : uint8_t { kMax, kMedian, kAvg, kMin, kNone };  // kNone: one series per rank

// "max", "median", "avg", "min", "none"; nullopt for anything else.
std::optional<StepAggregate> stepAggregateFromName(std::string_view name);
const char* stepAggregateName(StepAggregate a);
inline constexpr const char* kStepAggregateNames[] = {"max", "median", "avg", "min", "none"};

// The steps table's duration columns (`*_ns` but the start_ns/end_ns timestamps), in table
// order: the metric names Grafana may ask for.
const std::vector<std::string>& stepMetrics();
bool isStepMetric(std::string_view name);

struct StepSeriesSpec {
  std::string metric;           // REQUIRES: isStepMetric(metric)
  std::string job;              // REQUIRES: a valid job id (model::isValidJobId)
  std::vector<uint32_t> ranks;  // empty: every rank
  StepAggregate aggregate = StepAggregate::kMax;
  int64_t from_ns = 0;  // steps starting in [from_ns, to_ns]
  int64_t to_ns = INT64_MAX;
  uint64_t max_points = 1000;  // per series; more steps are averaged in buckets of steps. REQUIRES: > 0
};

struct StepSeries {
  std::string name;  // "iter_ns max", "iter_ns rank 3"
  struct Point {
    double value;    // ns; NaN when the step has no value
    double time_ms;  // Unix ms of the bucket's first step start
  };
  std::vector<Point> points;
};

// Returns the series (an aggregate: exactly one, maybe empty; kNone: one per rank with
// steps in range). A bucket of steps keeps the worst step for kMax, the best for kMin, and
// the mean otherwise. Throws QueryError as the engine does.
std::vector<StepSeries> stepSeries(QueryMetrics& runner, const storage::Store& store, const StepSeriesSpec& spec,
                                   const QueryOptions& options = {});

}  // namespace argus::query
