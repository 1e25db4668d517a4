// TableFunctionScan: the rows of a table function call in FROM. Asks the function for its
// operator (TableFunction::execute) and passes its chunks on; EXPLAIN shows the call with
// its bound arguments and, below it, the function's own operator (what it pushed down).
#pragma once

#include "query/execution/physical_operator.h"
#include "query/function/table_function.h"
#include "storage/store.h"

namespace argus::query {

class TableFunctionScan final : public PhysicalOperator {
 public:
  // REQUIRES: function, args and binding outlive the operator.
  TableFunctionScan(QueryContext& ctx, const storage::Store& store, const TableFunction& function, const TableFunctionArguments& args,
                    const TableFunctionBinding& binding, std::vector<size_t> column_ids, ScanPredicates pushed);
  bool produce(DataChunk& chunk) override;
  std::string describe() const override;

 private:
  const TableFunction& function_;
  const TableFunctionArguments& args_;
  std::vector<size_t> column_ids_;
  ScanPredicates pushed_;
};

}  // namespace argus::query
