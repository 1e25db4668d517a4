#include "query/function/table/diagnosis_support.h"

#include "diagnose/diagnosis.h"

namespace argus::query::diagnosis {

using L = LogicalType;

std::vector<TableFunctionParameter> stepRangeParameters(bool window_required) {
  return {{"job", L::kVarchar, true, {}, "the job"},
          {"from_step", L::kBigInt, window_required, Value::null(L::kBigInt), window_required ? "first step of the window" : "first step; NULL: the job's first"},
          {"to_step", L::kBigInt, window_required, Value::null(L::kBigInt), window_required ? "last step of the window (inclusive)" : "last step (inclusive); NULL: the job's last"},
          {"last", L::kBigInt, false, Value::null(L::kBigInt), "the job's last N steps instead of from_step and to_step"}};
}

void checkStepRange(const std::string& function, const TableFunctionArguments& args, size_t first) {
  if (args[first].isNull()) throw BinderError(args.positions[first], function + "(): job must not be NULL");
  for (size_t i : {first + 1, first + 2}) {
    if (!args[i].isNull() && args[i].bigintValue() < 0) {
      throw BinderError(args.positions[i], function + "(): " + std::string(i == first + 1 ? "from_step" : "to_step") + " must not be negative, got " + args[i].toSql());
    }
  }
  const Value& last = args[first + 3];
  if (!last.isNull()) {
    if (last.bigintValue() <= 0) throw BinderError(args.positions[first + 3], function + "(): last must be a positive BIGINT, got " + last.toSql());
    if (!args[first + 1].isNull() || !args[first + 2].isNull()) {
      throw BinderError(args.positions[first + 3], function + "(): give last or from_step / to_step, not both");
    }
  }
  if (!args[first + 1].isNull() && !args[first + 2].isNull() && args[first + 2].bigintValue() < args[first + 1].bigintValue()) {
    throw BinderError(args.positions[first + 2], function + "(): to_step " + args[first + 2].toSql() + " is before from_step " + args[first + 1].toSql());
  }
}

void checkWindowAndBaseline(const std::string& function, const TableFunctionArguments& args, size_t baseline) {
  const size_t from = baseline - 2, to = baseline - 1;
  for (size_t i : {from, to}) {
    if (args[i].isNull() || args[i].bigintValue() < 0) {
      throw BinderError(args.positions[i], function + "(): " + (i == from ? "from_step" : "to_step") + " must be a step number, got " + args[i].toSql());
    }
  }
  if (args[to].bigintValue() < args[from].bigintValue()) {
    throw BinderError(args.positions[to], function + "(): to_step " + args[to].toSql() + " is before from_step " + args[from].toSql());
  }
  if (args[baseline].isNull() || args[baseline].bigintValue() < 1 || args[baseline].bigintValue() > 100000) {
    throw BinderError(args.positions[baseline], function + "(): baseline must be 1 to 100000 steps");
  }
}

namespace {

void requireJob(const std::string& function, const Call& in, const diagnose::JobReader& reader) {
  if (!reader.exists().isOk()) throw ExecutionError(in.args.positions[0], function + "(): no job '" + in.args[0].stringValue() + "' in the store");
}

}  // namespace

ResolvedWindow resolveWindow(const std::string& function, const Call& in, const diagnose::JobReader& reader, size_t from_arg) {
  requireJob(function, in, reader);
  Result<std::vector<model::RankTopology>> topology = reader.topology();
  check(function, topology.status());
  const auto from = static_cast<uint64_t>(in.args[from_arg].bigintValue()), to = static_cast<uint64_t>(in.args[from_arg + 1].bigintValue());
  const auto baseline = static_cast<uint32_t>(in.args[from_arg + 2].bigintValue());
  // No steps before the window (a short capture): its ranks are compared with their peers.
  std::optional<diagnose::StepWindow> w = diagnose::baselineFor(from, to, 0, baseline, diagnose::DetectorOptions{}.warmup_steps, {});
  return ResolvedWindow{std::move(topology).value(), w.value_or(diagnose::StepWindow{from, to, 0, 0, true})};
}

StepRange resolveStepRange(const std::string& function, const Call& in, const diagnose::JobReader& reader, size_t first) {
  requireJob(function, in, reader);
  Result<std::optional<uint64_t>> last_step = reader.lastStep();
  check(function, last_step.status());
  const uint64_t job_last = last_step->value_or(0);
  StepRange r;
  const Value &from = in.args[first + 1], &to = in.args[first + 2], &last = in.args[first + 3];
  if (!last.isNull()) {
    r.to = job_last;
    r.from = job_last + 1 >= static_cast<uint64_t>(last.bigintValue()) ? job_last + 1 - static_cast<uint64_t>(last.bigintValue()) : 0;
    return r;
  }
  r.from = from.isNull() ? 0 : static_cast<uint64_t>(from.bigintValue());
  r.to = to.isNull() ? job_last : static_cast<uint64_t>(to.bigintValue());
  return r;
}

diagnose::JobReader Call::reader(MemoryReservation* memory) const {
  QueryContext* c = ctx;
  return diagnose::JobReader(*store, args[0].stringValue(), [c] { c->check(); }, [memory](size_t bytes) { memory->set(bytes); });
}

void check(const std::string& function, const Status& status) {
  if (!status.isOk()) throw ExecutionError(function + "(): " + status.message());
}

void addFindingColumns(TableFunctionBinding* b, bool with_window) {
  auto add = [&](const char* name, L type) {
    b->names.push_back(name);
    b->types.push_back(type);
  };
  add("kind", L::kVarchar);
  if (with_window) {
    add("from_step", L::kBigInt);
    add("to_step", L::kBigInt);
  }
  add("ranks", L::kVarchar);
  add("pp_rank", L::kBigInt);
  add("link", L::kVarchar);
  add("kernel", L::kVarchar);
  add("slowdown", L::kDouble);
  add("confidence", L::kDouble);
  add("evidence", L::kVarchar);
  if (with_window) {
    add("from_ns", L::kBigInt);
    add("to_ns", L::kBigInt);
  }
}

std::vector<Value> findingRow(const diagnose::Finding& f, bool with_window) {
  auto text = [](const std::string& s) { return s.empty() ? Value::null(L::kVarchar) : Value::varchar(s); };
  std::vector<Value> row{Value::varchar(diagnose::findingKindName(f.kind))};
  if (with_window) {
    row.push_back(Value::bigint(static_cast<int64_t>(f.from_step)));
    row.push_back(Value::bigint(static_cast<int64_t>(f.to_step)));
  }
  row.push_back(text(diagnose::rankList(f.ranks)));
  row.push_back(f.pp_rank ? Value::bigint(*f.pp_rank) : Value::null(L::kBigInt));
  row.push_back(text(f.link));
  row.push_back(text(f.kernel));
  row.push_back(Value::dbl(f.slowdown));
  row.push_back(Value::dbl(f.confidence));
  row.push_back(Value::varchar(f.evidence));
  if (with_window) {
    row.push_back(Value::bigint(f.from_ns));
    row.push_back(Value::bigint(f.to_ns));
  }
  return row;
}

}  // namespace argus::query::diagnosis
