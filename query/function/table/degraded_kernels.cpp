// degraded_kernels(job, rank, from_step, to_step, baseline => 50, peers => 8): stage 3 of the
// diagnosis: the rank's kernels in a window against its own baseline (the `baseline` steps
// before it) and against its nearest stage peers, the most time lost first
// (diagnose/kernel_analysis.h).
#include "diagnose/diagnosis.h"
#include "query/execution/rows_source.h"
#include "query/function/table/diagnosis_support.h"
#include "query/function/table_function_registry.h"

namespace argus::query {

namespace {

using L = LogicalType;
constexpr const char* kName = "degraded_kernels";

class DegradedKernels final : public TableFunction {
 public:
  DegradedKernels()
      : TableFunction(kName, "a rank's kernels in a window against its baseline and its peers (stage 3 of the diagnosis)",
                      {{"job", L::kVarchar, true, {}, "the job"},
                       {"rank", L::kBigInt, true, {}, "the rank"},
                       {"from_step", L::kBigInt, true, {}, "first step of the window"},
                       {"to_step", L::kBigInt, true, {}, "last step of the window (inclusive)"},
                       {"baseline", L::kBigInt, false, Value::bigint(50), "steps before the window to compare with"},
                       {"peers", L::kBigInt, false, Value::bigint(8), "stage peers to compare with (the nearest ranks)"}}) {}

  TableFunctionBinding bind(const TableFunctionArguments& args) const override {
    if (args[0].isNull()) throw BinderError(args.positions[0], std::string(kName) + "(): job must not be NULL");
    if (args[1].isNull() || args[1].bigintValue() < 0 || args[1].bigintValue() > UINT32_MAX) {
      throw BinderError(args.positions[1], std::string(kName) + "(): rank must be a rank number, got " + args[1].toSql());
    }
    if (args[5].isNull() || args[5].bigintValue() < 0 || args[5].bigintValue() > 1024) throw BinderError(args.positions[5], std::string(kName) + "(): peers must be 0 to 1024");
    // from_step, to_step and baseline sit one further on than in stragglers().
    TableFunctionArguments shifted = args;
    shifted.values.erase(shifted.values.begin() + 1);
    shifted.positions.erase(shifted.positions.begin() + 1);
    diagnosis::checkWindowAndBaseline(kName, shifted, 3);
    return TableFunctionBinding{{"signature", "kernel", "calls_per_step", "ns_per_step", "baseline_ns_per_step", "peers_ns_per_step", "p50_ns",
                                 "baseline_p50_ns", "p99_ns", "baseline_p99_ns", "slowdown", "lost_ns_per_step", "share", "new"},
                                {L::kId, L::kVarchar, L::kDouble, L::kDouble, L::kDouble, L::kDouble, L::kDouble, L::kDouble, L::kDouble, L::kDouble, L::kDouble,
                                 L::kDouble, L::kDouble, L::kBoolean},
                                nullptr};
  }

  PhysicalOperatorPtr execute(const TableFunctionInput& in) const override {
    auto compute = [in = diagnosis::Call(in)] {
      MemoryReservation memory(*in.ctx, "degraded_kernels()");
      diagnose::JobReader reader = in.reader(&memory);
      const diagnosis::ResolvedWindow w = diagnosis::resolveWindow(kName, in, reader, 2);
      diagnose::KernelOptions o;
      o.peers = static_cast<uint32_t>(in.args[5].bigintValue());
      Result<std::vector<diagnose::KernelChange>> kernels = diagnose::analyzeKernels(reader, w.topology, static_cast<uint32_t>(in.args[1].bigintValue()), w.window, o);
      if (kernels.status().code() == Status::Code::kNotFound) throw ExecutionError(in.args.positions[1], std::string(kName) + "(): " + kernels.status().message());
      diagnosis::check(kName, kernels.status());
      std::vector<std::vector<Value>> rows;
      for (const diagnose::KernelChange& c : *kernels) {
        rows.push_back({Value::id(c.signature), c.name.empty() ? Value::null(L::kVarchar) : Value::varchar(c.name), Value::dbl(c.calls_per_step),
                        Value::dbl(c.ns_per_step), Value::dbl(c.baseline_ns_per_step), Value::dbl(c.peers_ns_per_step), Value::dbl(c.p50_ns),
                        Value::dbl(c.baseline_p50_ns), Value::dbl(c.p99_ns), Value::dbl(c.baseline_p99_ns), Value::dbl(c.slowdown), Value::dbl(c.lost_ns_per_step),
                        Value::dbl(c.share), Value::boolean(c.is_new)});
      }
      return rows;
    };
    return std::make_unique<RowsSource>(in.ctx, "DEGRADED_KERNELS job=" + in.args[0].stringValue() + " rank=" + std::to_string(in.args[1].bigintValue()),
                                        in.binding.names, in.binding.types, compute, in.column_ids);
  }
};

}  // namespace

void registerDegradedKernels(TableFunctionRegistry& r) { r.add(std::make_unique<DegradedKernels>()); }

}  // namespace argus::query
