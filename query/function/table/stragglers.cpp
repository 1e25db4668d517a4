// stragglers(job, from_step, to_step, baseline => 50): stage 2 of the diagnosis for one
// window of steps: the ranks, stages, links and stalls to blame, each against its true peers
// and its own baseline (the `baseline` steps before the window): diagnose/window_analysis.h.
// One row per finding, most confident first.
#include "diagnose/diagnosis.h"
#include "query/execution/rows_source.h"
#include "query/function/table/diagnosis_support.h"
#include "query/function/table_function_registry.h"

namespace argus::query {

namespace {

using L = LogicalType;
constexpr const char* kName = "stragglers";

std::vector<TableFunctionParameter> functionParameters() {
  auto p = diagnosis::stepRangeParameters(true);
  p.pop_back();  // a window, not the last N steps
  p.push_back({"baseline", L::kBigInt, false, Value::bigint(50), "steps before the window to compare with"});
  return p;
}

class Stragglers final : public TableFunction {
 public:
  Stragglers() : TableFunction(kName, "ranks, stages, links and stalls to blame in a window of steps (stage 2 of the diagnosis)", functionParameters()) {}

  TableFunctionBinding bind(const TableFunctionArguments& args) const override {
    if (args[0].isNull()) throw BinderError(args.positions[0], std::string(kName) + "(): job must not be NULL");
    diagnosis::checkWindowAndBaseline(kName, args, 3);
    TableFunctionBinding b;
    diagnosis::addFindingColumns(&b, false);
    return b;
  }

  PhysicalOperatorPtr execute(const TableFunctionInput& in) const override {
    auto compute = [in = diagnosis::Call(in)] {
      MemoryReservation memory(*in.ctx, "stragglers()");
      diagnose::JobReader reader = in.reader(&memory);
      const diagnosis::ResolvedWindow w = diagnosis::resolveWindow(kName, in, reader, 1);
      Result<std::vector<diagnose::Finding>> found = diagnose::analyzeWindow(reader, w.topology, w.window);
      diagnosis::check(kName, found.status());
      std::vector<std::vector<Value>> rows;
      for (const diagnose::Finding& f : *found) rows.push_back(diagnosis::findingRow(f, false));
      return rows;
    };
    return std::make_unique<RowsSource>(in.ctx, "STRAGGLERS job=" + in.args[0].stringValue(), in.binding.names, in.binding.types, compute, in.column_ids);
  }
};

}  // namespace

void registerStragglers(TableFunctionRegistry& r) { r.add(std::make_unique<Stragglers>()); }

}  // namespace argus::query
