// What the diagnosis table functions (anomaly_windows, stragglers, degraded_kernels,
// diagnose) share: the job and step-range arguments, the reader they run on, and store
// errors as ExecutionErrors.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "diagnose/finding.h"
#include "diagnose/job_reader.h"
#include "diagnose/window_analysis.h"
#include "query/common/errors.h"
#include "query/common/value.h"
#include "query/function/table_function.h"

namespace argus::query::diagnosis {

// The parameters job, from_step, to_step and last, in that order from index `first`.
std::vector<TableFunctionParameter> stepRangeParameters(bool window_required);

// Checks them in bind(): a NULL job, negative steps, last <= 0, last with a range, to < from.
void checkStepRange(const std::string& function, const TableFunctionArguments& args, size_t first);

// What a diagnosis function keeps of its TableFunctionInput until its rows are computed (at
// the first produce(), after execute() returned): copies and pointers that outlive it.
struct Call {
  explicit Call(const TableFunctionInput& in) : ctx(&in.ctx), store(&in.store), args(in.args) {}
  QueryContext* ctx;
  const storage::Store* store;
  TableFunctionArguments args;
  // A reader of the call's job (argument 0) that checks the query's deadline per batch and
  // holds what it reads in `memory` (the query's cap). REQUIRES: memory outlives it.
  diagnose::JobReader reader(MemoryReservation* memory) const;
};

// Checks a required window and its baseline: from_step and to_step at `baseline - 2` and
// `baseline - 1` (not NULL, not negative, in order), a baseline of 1 to 100000 steps.
void checkWindowAndBaseline(const std::string& function, const TableFunctionArguments& args, size_t baseline);

// The inclusive step range they select, for a job that exists (ExecutionError otherwise):
// last => N is the job's last N steps; a missing bound is the job's first / last step.
struct StepRange {
  uint64_t from = 0, to = 0;
};
StepRange resolveStepRange(const std::string& function, const Call& call, const diagnose::JobReader& reader, size_t first);

// For stragglers() and degraded_kernels(): the job's ranks, and the window whose from_step,
// to_step and baseline are arguments from_arg, from_arg + 1 and from_arg + 2, with its
// baseline. ExecutionError for an unknown job or a window with no step before it.
struct ResolvedWindow {
  std::vector<model::RankTopology> topology;
  diagnose::StepWindow window;
};
ResolvedWindow resolveWindow(const std::string& function, const Call& call, const diagnose::JobReader& reader, size_t from_arg);

// Throws ExecutionError "<function>(): <status message>" unless ok.
void check(const std::string& function, const Status& status);

// A finding's columns: kind, from_step, to_step, ranks, pp_rank, link, kernel, slowdown,
// confidence, evidence, from_ns, to_ns (`with_window` false: without the steps and times).
void addFindingColumns(TableFunctionBinding* b, bool with_window);
std::vector<Value> findingRow(const diagnose::Finding& f, bool with_window);

}  // namespace argus::query::diagnosis
