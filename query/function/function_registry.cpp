#include "query/function/function_registry.h"

#include <cctype>

namespace argus::query {

FunctionRegistry::FunctionRegistry() {
  registerArithmetic(*this);
  registerComparison(*this);
  registerMathFunctions(*this);
  registerStringFunctions(*this);
  registerHistogramFunctions(*this);
  registerAggregates(*this);
  registerStepWindows(*this);
}

const FunctionRegistry& FunctionRegistry::instance() {
  static const FunctionRegistry registry;
  return registry;
}

const std::vector<ScalarFunction>* FunctionRegistry::scalar(std::string_view name) const {
  auto it = scalars_.find(name);
  return it == scalars_.end() ? nullptr : &it->second;
}

const std::vector<AggregateFunction>* FunctionRegistry::aggregate(std::string_view name) const {
  auto it = aggregates_.find(name);
  return it == aggregates_.end() ? nullptr : &it->second;
}

std::vector<std::string> FunctionRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, fns] : scalars_) {
    if (std::isalpha(static_cast<unsigned char>(name[0]))) out.push_back(name);
  }
  for (const auto& [name, fns] : aggregates_) out.push_back(name);
  return out;
}

}  // namespace argus::query
