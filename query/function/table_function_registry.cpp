#include "query/function/table_function_registry.h"

#include <cassert>

namespace argus::query {

TableFunctionRegistry::TableFunctionRegistry() {
  registerAnomalyWindows(*this);
  registerDegradedKernels(*this);
  registerDiagnose(*this);
  registerFindings(*this);
  registerGenerateSeries(*this);
  registerRecentSteps(*this);
  registerStepStats(*this);
  registerStragglers(*this);
  registerTableFunctionsListing(*this);
}

const TableFunctionRegistry& TableFunctionRegistry::instance() {
  static const TableFunctionRegistry registry;
  return registry;
}

const TableFunction* TableFunctionRegistry::find(std::string_view name) const {
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : it->second.get();
}

std::vector<const TableFunction*> TableFunctionRegistry::all() const {
  std::vector<const TableFunction*> out;
  for (const auto& [name, f] : functions_) out.push_back(f.get());
  return out;
}

std::vector<std::string> TableFunctionRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, f] : functions_) out.push_back(name);
  return out;
}

void TableFunctionRegistry::add(std::unique_ptr<TableFunction> f) {
  assert(!functions_.count(f->name()) && "table function registered twice");
  std::string name = f->name();
  functions_.emplace(std::move(name), std::move(f));
}

}  // namespace argus::query
