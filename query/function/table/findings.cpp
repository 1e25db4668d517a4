// findings(job): what argusd's continuous diagnosis recorded for the job, in the order it
// found them (diagnose/monitor.h, Store::addFinding): each finding with when it was found
// and how soon after its window opened. Empty for a job no diagnosis pass has flagged (or on
// a store argusd never ran its monitor on); diagnose() recomputes the same findings on
// demand.
#include "diagnose/finding_record.h"
#include "query/execution/rows_source.h"
#include "query/function/table/diagnosis_support.h"
#include "query/function/table_function_registry.h"

namespace argus::query {

namespace {

using L = LogicalType;
constexpr const char* kName = "findings";

class Findings final : public TableFunction {
 public:
  Findings() : TableFunction(kName, "findings argusd's continuous diagnosis recorded for a job, as it found them", {{"job", L::kVarchar, true, {}, "the job"}}) {}

  TableFunctionBinding bind(const TableFunctionArguments& args) const override {
    if (args[0].isNull()) throw BinderError(args.positions[0], std::string(kName) + "(): job must not be NULL");
    TableFunctionBinding b;
    b.names.push_back("detected_ns");
    b.types.push_back(L::kBigInt);
    diagnosis::addFindingColumns(&b, true);
    b.names.insert(b.names.end(), {"steps_after_onset", "lag_s"});
    b.types.insert(b.types.end(), {L::kBigInt, L::kDouble});
    return b;
  }

  PhysicalOperatorPtr execute(const TableFunctionInput& in) const override {
    auto compute = [in = diagnosis::Call(in)] {
      Result<std::vector<std::string>> recorded = in.store->findings(in.args[0].stringValue());
      if (recorded.status().isNotFound()) throw ExecutionError(in.args.positions[0], std::string(kName) + "(): no job '" + in.args[0].stringValue() + "' in the store");
      diagnosis::check(kName, recorded.status());
      MemoryReservation memory(*in.ctx, "findings()");
      size_t bytes = 0;
      std::vector<std::vector<Value>> rows;
      for (const std::string& value : *recorded) {
        diagnose::RecordedFinding r;
        diagnosis::check(kName, diagnose::decodeRecordedFinding(value, &r));
        std::vector<Value> row{Value::bigint(r.detected_ns)};
        for (Value& v : diagnosis::findingRow(r.finding, true)) row.push_back(std::move(v));
        row.push_back(Value::bigint(static_cast<int64_t>(r.steps_after_onset)));
        row.push_back(Value::dbl(r.lag_s));
        rows.push_back(std::move(row));
        bytes += value.size() * 2;
        memory.set(bytes);
      }
      return rows;
    };
    return std::make_unique<RowsSource>(in.ctx, "FINDINGS job=" + in.args[0].stringValue(), in.binding.names, in.binding.types, compute, in.column_ids);
  }
};

}  // namespace

void registerFindings(TableFunctionRegistry& r) { r.add(std::make_unique<Findings>()); }

}  // namespace argus::query
