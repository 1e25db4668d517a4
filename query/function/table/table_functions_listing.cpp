// table_functions(): every table function and its parameters, one row per parameter (a
// function without parameters has one row, parameter NULL): what `\functions`-style
// discovery and the docs read.
#include "query/execution/rows_source.h"
#include "query/function/table_function_registry.h"

namespace argus::query {

namespace {

using L = LogicalType;

class TableFunctionsListing final : public TableFunction {
 public:
  TableFunctionsListing() : TableFunction("table_functions", "the table functions and their parameters", {}) {}

  TableFunctionBinding bind(const TableFunctionArguments&) const override {
    return TableFunctionBinding{{"function", "description", "position", "parameter", "type", "required", "default_value", "doc"},
                                {L::kVarchar, L::kVarchar, L::kBigInt, L::kVarchar, L::kVarchar, L::kBoolean, L::kVarchar, L::kVarchar},
                                nullptr};
  }

  PhysicalOperatorPtr execute(const TableFunctionInput& in) const override {
    std::vector<std::vector<Value>> rows;
    for (const TableFunction* f : TableFunctionRegistry::instance().all()) {
      const auto& params = f->parameters();
      if (params.empty()) {
        rows.push_back({Value::varchar(f->name()), Value::varchar(f->doc()), Value::null(L::kBigInt), Value::null(L::kVarchar),
                        Value::null(L::kVarchar), Value::null(L::kBoolean), Value::null(L::kVarchar), Value::null(L::kVarchar)});
      }
      for (size_t i = 0; i < params.size(); ++i) {
        const TableFunctionParameter& p = params[i];
        rows.push_back({Value::varchar(f->name()), Value::varchar(f->doc()), Value::bigint(static_cast<int64_t>(i + 1)),
                        Value::varchar(p.name), Value::varchar(typeName(p.type)), Value::boolean(p.required),
                        p.required ? Value::null(L::kVarchar) : Value::varchar(p.default_value.toSql()), Value::varchar(p.doc)});
      }
    }
    return std::make_unique<RowsSource>(in.ctx, "ROWS", in.binding.names, in.binding.types, std::move(rows), in.column_ids);
  }
};

}  // namespace

void registerTableFunctionsListing(TableFunctionRegistry& r) { r.add(std::make_unique<TableFunctionsListing>()); }

}  // namespace argus::query
