// diagnose(job, from_step, to_step, last, baseline => 50): every stage of the diagnosis in
// order (diagnose/diagnosis.h): the job's anomalous windows, then in each the ranks,
// stages, links, stalls and kernels to blame. One row per finding, by window then
// confidence; a window nothing explains is one `unexplained` row.
#include "diagnose/diagnosis.h"
#include "query/execution/rows_source.h"
#include "query/function/table/diagnosis_support.h"
#include "query/function/table_function_registry.h"

namespace argus::query {

namespace {

using L = LogicalType;
constexpr const char* kName = "diagnose";

std::vector<TableFunctionParameter> functionParameters() {
  auto p = diagnosis::stepRangeParameters(false);
  p.push_back({"baseline", L::kBigInt, false, Value::bigint(50), "steps before each window to compare with"});
  return p;
}

class Diagnose final : public TableFunction {
 public:
  Diagnose() : TableFunction(kName, "ranked findings with evidence: anomalous windows, then what to blame in each", functionParameters()) {}

  TableFunctionBinding bind(const TableFunctionArguments& args) const override {
    diagnosis::checkStepRange(kName, args, 0);
    if (args[4].isNull() || args[4].bigintValue() < 1 || args[4].bigintValue() > 100000) {
      throw BinderError(args.positions[4], std::string(kName) + "(): baseline must be 1 to 100000 steps");
    }
    TableFunctionBinding b;
    diagnosis::addFindingColumns(&b, true);
    return b;
  }

  PhysicalOperatorPtr execute(const TableFunctionInput& in) const override {
    auto compute = [in = diagnosis::Call(in)] {
      MemoryReservation memory(*in.ctx, "diagnose()");
      diagnose::JobReader reader = in.reader(&memory);
      const diagnosis::StepRange range = diagnosis::resolveStepRange(kName, in, reader, 0);
      diagnose::DiagnoseOptions o;
      o.baseline_steps = static_cast<uint32_t>(in.args[4].bigintValue());
      Result<std::vector<diagnose::Finding>> found = diagnose::diagnose(reader, range.from, range.to, o);
      diagnosis::check(kName, found.status());
      std::vector<std::vector<Value>> rows;
      for (const diagnose::Finding& f : *found) rows.push_back(diagnosis::findingRow(f, true));
      return rows;
    };
    return std::make_unique<RowsSource>(in.ctx, "DIAGNOSE job=" + in.args[0].stringValue(), in.binding.names, in.binding.types, compute, in.column_ids);
  }
};

}  // namespace

void registerDiagnose(TableFunctionRegistry& r) { r.add(std::make_unique<Diagnose>()); }

}  // namespace argus::query
