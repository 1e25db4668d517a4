// FunctionRegistry: every scalar function, operator and aggregate by name, with its
// overloads. Built once, read-only afterwards (thread-safe to read).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "query/function/aggregate_function.h"
#include "query/function/scalar_function.h"

namespace argus::query {

class FunctionRegistry {
 public:
  static const FunctionRegistry& instance();

  // Overloads of a scalar function or operator ("+", "=", "abs"); null when none.
  const std::vector<ScalarFunction>* scalar(std::string_view name) const;
  const std::vector<AggregateFunction>* aggregate(std::string_view name) const;
  // Names of every function, for messages and docs.
  std::vector<std::string> names() const;

  void add(ScalarFunction f) { scalars_[f.name].push_back(std::move(f)); }
  void add(AggregateFunction f) { aggregates_[f.name].push_back(std::move(f)); }

 private:
  FunctionRegistry();
  std::map<std::string, std::vector<ScalarFunction>, std::less<>> scalars_;
  std::map<std::string, std::vector<AggregateFunction>, std::less<>> aggregates_;
};

// Registration, one per file of query/function/.
void registerArithmetic(FunctionRegistry& r);
void registerComparison(FunctionRegistry& r);
void registerMathFunctions(FunctionRegistry& r);
void registerStringFunctions(FunctionRegistry& r);
void registerHistogramFunctions(FunctionRegistry& r);
void registerAggregates(FunctionRegistry& r);
void registerStepWindows(FunctionRegistry& r);

// floor(step / width) * width: the start of the window of `width` steps that holds step;
// false when it does not fit a BIGINT. REQUIRES: width > 0. (step_windows.cpp)
bool stepWindowStart(int64_t step, int64_t width, int64_t* start);

}  // namespace argus::query
