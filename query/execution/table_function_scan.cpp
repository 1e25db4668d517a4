#include "query/execution/table_function_scan.h"

namespace argus::query {

TableFunctionScan::TableFunctionScan(QueryContext& ctx, const storage::Store& store, const TableFunction& function,
                                     const TableFunctionArguments& args, const TableFunctionBinding& binding,
                                     std::vector<size_t> column_ids, ScanPredicates pushed)
    : PhysicalOperator(ctx), function_(function), args_(args), column_ids_(std::move(column_ids)), pushed_(std::move(pushed)) {
  for (size_t id : column_ids_) {
    names.push_back(binding.names[id]);
    types.push_back(binding.types[id]);
  }
  children_.push_back(function_.execute(TableFunctionInput{ctx, store, args_, binding, column_ids_, pushed_}));
  if (children_[0]->types != types) {
    throw ExecutionError(args_.call_pos, "BUG: " + function_.name() + "() produced other columns than it bound");
  }
}

bool TableFunctionScan::produce(DataChunk& chunk) { return children_[0]->next(chunk); }

std::string TableFunctionScan::describe() const {
  std::string out = "TABLE_FUNCTION " + function_.name() + "(";
  const auto& params = function_.parameters();
  for (size_t i = 0; i < params.size(); ++i) out += (i ? ", " : "") + params[i].name + " => " + args_[i].toSql();
  out += ") columns=[";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out + "]";
}

}  // namespace argus::query
