// TableFunctionRegistry: the table functions a query can call in FROM, by name. Built once
// with the built-ins (query/function/table/) and the diagnosis stages; read-only afterwards
// (thread-safe to read). A new function adds one register call to the constructor.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "query/function/table_function.h"

namespace argus::query {

class TableFunctionRegistry {
 public:
  static const TableFunctionRegistry& instance();

  const TableFunction* find(std::string_view name) const;  // null when none
  // Every function, in name order.
  std::vector<const TableFunction*> all() const;
  std::vector<std::string> names() const;

  // REQUIRES: no function of that name yet.
  void add(std::unique_ptr<TableFunction> f);

 private:
  TableFunctionRegistry();
  std::map<std::string, std::unique_ptr<TableFunction>, std::less<>> functions_;
};

// Registration, one per file of query/function/table/.
void registerAnomalyWindows(TableFunctionRegistry& r);
void registerDegradedKernels(TableFunctionRegistry& r);
void registerDiagnose(TableFunctionRegistry& r);
void registerFindings(TableFunctionRegistry& r);
void registerGenerateSeries(TableFunctionRegistry& r);
void registerRecentSteps(TableFunctionRegistry& r);
void registerStepStats(TableFunctionRegistry& r);
void registerStragglers(TableFunctionRegistry& r);
void registerTableFunctionsListing(TableFunctionRegistry& r);

}  // namespace argus::query
