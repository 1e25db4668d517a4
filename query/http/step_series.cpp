#include "query/http/step_series.h"

#include <algorithm>
#include <cmath>

#include "query/binder/catalog.h"
#include "query/http/grafana_time.h"

namespace argus::query {

namespace {

std::string quoted(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

double numberOrNaN(const Value& v) {
  if (v.isNull()) return std::nan("");
  return v.type() == LogicalType::kDouble ? v.doubleValue() : static_cast<double>(v.bigintValue());
}

// Across ranks within a step: the aggregate itself (kNone never gets here).
const char* acrossRanks(StepAggregate a) {
  switch (a) {
    case StepAggregate::kMax:
      return "max";
    case StepAggregate::kMedian:
      return "median";
    case StepAggregate::kAvg:
      return "avg";
    case StepAggregate::kMin:
      return "min";
    case StepAggregate::kNone:
      break;
  }
  return "avg";
}

// Within a bucket of steps: keep spikes for max and dips for min, else the mean.
const char* withinBucket(StepAggregate a) {
  return a == StepAggregate::kMax ? "max" : a == StepAggregate::kMin ? "min" : "avg";
}

}  // namespace

std::optional<StepAggregate> stepAggregateFromName(std::string_view name) {
  for (size_t i = 0; i < std::size(kStepAggregateNames); ++i) {
    if (name == kStepAggregateNames[i]) return static_cast<StepAggregate>(i);
  }
  return std::nullopt;
}

const char* stepAggregateName(StepAggregate a) {
  return kStepAggregateNames[static_cast<size_t>(a)];
}

const std::vector<std::string>& stepMetrics() {
  static const std::vector<std::string> metrics = [] {
    std::vector<std::string> names;
    for (const TableColumn& c : findTable("steps")->columns) {
      if (c.name.ends_with("_ns") && c.name != "start_ns" && c.name != "end_ns") names.push_back(c.name);
    }
    return names;
  }();
  return metrics;
}

bool isStepMetric(std::string_view name) {
  const auto& m = stepMetrics();
  return std::find(m.begin(), m.end(), name) != m.end();
}

std::vector<StepSeries> stepSeries(QueryMetrics& runner, const storage::Store& store, const StepSeriesSpec& spec,
                                   const QueryOptions& options) {
  std::string where =
      "job = " + quoted(spec.job) + " AND start_ns >= " + std::to_string(spec.from_ns) + " AND start_ns <= " + std::to_string(spec.to_ns);
  if (!spec.ranks.empty()) {
    where += " AND rank IN (";
    for (size_t i = 0; i < spec.ranks.size(); ++i) where += (i ? ", " : "") + std::to_string(spec.ranks[i]);
    where += ")";
  }
  // The steps in range fix the bucket width: at most max_points buckets of whole steps,
  // aligned on the first step so every rank's buckets line up.
  QueryResult bounds = runner.run(store, "SELECT min(step), max(step) FROM steps WHERE " + where, options);
  std::vector<StepSeries> series;
  const bool per_rank = spec.aggregate == StepAggregate::kNone;
  if (!per_rank) series.push_back({spec.metric + " " + stepAggregateName(spec.aggregate), {}});
  if (bounds.rows == 0 || bounds.value(0, 0).isNull()) return series;
  const int64_t lo = bounds.value(0, 0).bigintValue();
  const uint64_t span = static_cast<uint64_t>(bounds.value(0, 1).bigintValue() - lo) + 1;
  const uint64_t width = std::max<uint64_t>(1, (span + spec.max_points - 1) / spec.max_points);
  const std::string bucket = "(step - " + std::to_string(lo) + ") // " + std::to_string(width) + " AS bucket";

  std::string sql;
  if (per_rank) {
    sql = "SELECT rank, " + bucket + ", min(start_ns) AS t, avg(" + spec.metric + ") AS v FROM steps WHERE " + where +
          " GROUP BY rank, bucket ORDER BY rank, bucket";
  } else {
    sql = "SELECT " + bucket + ", min(t) AS t, " + withinBucket(spec.aggregate) + "(v) AS v FROM (SELECT step, min(start_ns) AS t, " +
          acrossRanks(spec.aggregate) + "(" + spec.metric + ") AS v FROM steps WHERE " + where +
          " GROUP BY step) GROUP BY bucket ORDER BY bucket";
  }
  QueryResult r = runner.run(store, sql, options);
  const size_t t_col = per_rank ? 2 : 1, v_col = t_col + 1;
  for (size_t row = 0; row < r.rows; ++row) {
    if (per_rank) {
      std::string name = spec.metric + " rank " + std::to_string(r.value(row, 0).bigintValue());
      if (series.empty() || series.back().name != name) series.push_back({std::move(name), {}});
    }
    series.back().points.push_back({numberOrNaN(r.value(row, v_col)), nsToMs(r.value(row, t_col).bigintValue())});
  }
  return series;
}

}  // namespace argus::query
