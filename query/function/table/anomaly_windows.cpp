// anomaly_windows(job, from_step, to_step, last, metric => 'iter_ns', rank => NULL,
// threshold => 6, min_steps => 2, warmup => 20): stage 1 of the diagnosis. The job's series
// of `metric` per step (max over ranks: the job waits for its slowest; or one rank's) run
// through the online robust change-point detector (diagnose/change_detector.h); one row per
// anomalous window, in step order.
#include "diagnose/diagnosis.h"
#include "query/binder/catalog.h"
#include "query/execution/rows_source.h"
#include "query/function/table/diagnosis_support.h"
#include "query/function/table_function_registry.h"

namespace argus::query {

namespace {

using L = LogicalType;
constexpr const char* kName = "anomaly_windows";

std::vector<TableFunctionParameter> functionParameters() {
  auto p = diagnosis::stepRangeParameters(false);
  p.push_back({"metric", L::kVarchar, false, Value::varchar("iter_ns"), "a steps column in ns (iter_ns, compute_ns, comm_exposed_ns, ...)"});
  p.push_back({"rank", L::kBigInt, false, Value::null(L::kBigInt), "one rank's series; NULL: the max over ranks per step"});
  p.push_back({"threshold", L::kDouble, false, Value::dbl(6), "robust z-score (median and MAD of the baseline) a step must pass"});
  p.push_back({"min_steps", L::kBigInt, false, Value::bigint(2), "consecutive anomalous steps that open a window"});
  p.push_back({"warmup", L::kBigInt, false, Value::bigint(20), "first steps neither judged nor baseline"});
  return p;
}

class AnomalyWindows final : public TableFunction {
 public:
  AnomalyWindows() : TableFunction(kName, "anomalous windows of a job's step time (stage 1 of the diagnosis)", functionParameters()) {}

  TableFunctionBinding bind(const TableFunctionArguments& args) const override {
    diagnosis::checkStepRange(kName, args, 0);
    if (args[4].isNull() || !catalogHasStepsColumn(args[4].stringValue())) {
      throw BinderError(args.positions[4], std::string(kName) + "(): metric must name a steps column, got " + args[4].toSql());
    }
    if (!args[5].isNull() && (args[5].bigintValue() < 0 || args[5].bigintValue() > UINT32_MAX)) {
      throw BinderError(args.positions[5], std::string(kName) + "(): rank must be a rank number, got " + args[5].toSql());
    }
    if (args[6].isNull() || !(args[6].doubleValue() > 0)) throw BinderError(args.positions[6], std::string(kName) + "(): threshold must be positive");
    if (args[7].isNull() || args[7].bigintValue() < 1 || args[7].bigintValue() > 1000) {
      throw BinderError(args.positions[7], std::string(kName) + "(): min_steps must be 1 to 1000");
    }
    if (args[8].isNull() || args[8].bigintValue() < 0) throw BinderError(args.positions[8], std::string(kName) + "(): warmup must not be negative");
    return TableFunctionBinding{{"from_step", "to_step", "anomalous_steps", "baseline_ns", "slowdown", "peak_z", "confidence", "open"},
                                {L::kBigInt, L::kBigInt, L::kBigInt, L::kDouble, L::kDouble, L::kDouble, L::kDouble, L::kBoolean},
                                nullptr,
                                {"from_step"}};
  }

  PhysicalOperatorPtr execute(const TableFunctionInput& in) const override {
    auto compute = [in = diagnosis::Call(in)] {
      MemoryReservation memory(*in.ctx, "anomaly_windows()");
      diagnose::JobReader reader = in.reader(&memory);
      const diagnosis::StepRange range = diagnosis::resolveStepRange(kName, in, reader, 0);
      diagnose::DetectorOptions o;
      o.threshold = in.args[6].doubleValue();
      o.min_steps = static_cast<uint32_t>(in.args[7].bigintValue());
      o.warmup_steps = static_cast<uint64_t>(in.args[8].bigintValue());
      std::optional<uint32_t> rank;
      if (!in.args[5].isNull()) rank = static_cast<uint32_t>(in.args[5].bigintValue());
      Result<std::vector<diagnose::AnomalyWindow>> windows = diagnose::findAnomalyWindows(reader, range.from, range.to, in.args[4].stringValue(), rank, o);
      diagnosis::check(kName, windows.status());
      std::vector<std::vector<Value>> rows;
      for (const diagnose::AnomalyWindow& w : *windows) {
        rows.push_back({Value::bigint(static_cast<int64_t>(w.from_step)), Value::bigint(static_cast<int64_t>(w.to_step)), Value::bigint(w.anomalous_steps),
                        Value::dbl(w.baseline), Value::dbl(w.slowdown), Value::dbl(w.peak_z), Value::dbl(w.confidence()), Value::boolean(w.open)});
      }
      return rows;
    };
    return std::make_unique<RowsSource>(in.ctx, "ANOMALY_WINDOWS job=" + in.args[0].stringValue() + " metric=" + in.args[4].stringValue(), in.binding.names,
                                        in.binding.types, compute, in.column_ids);
  }

 private:
  static bool catalogHasStepsColumn(const std::string& name) {
    const TableInfo* steps = findTable("steps");
    return steps != nullptr && steps->findColumn(name) >= 0 && name != "rank" && name != "step" && name != "attempt" && name != "job";
  }
};

}  // namespace

void registerAnomalyWindows(TableFunctionRegistry& r) { r.add(std::make_unique<AnomalyWindows>()); }

}  // namespace argus::query
