// TableFunction: a source of rows called in FROM with constant arguments,
// `FROM f(arg, ..., name => arg, ...)` (docs/query/language.md, "Table functions"; for
// implementers docs/query/table-functions.md). The built-ins and the diagnosis stages
// implement it and register in the TableFunctionRegistry.
//
// Life of a call: the binder evaluates the arguments (constants), matches them to
// parameters() (matchArguments below: positional, then named, defaults filled in, types
// converted) and calls bind(), which checks the values and returns the output schema.
// The planner prunes the columns the query does not read; the physical planner calls
// execute() with the store and the query's context, and the operator it returns produces
// the rows, chunk by chunk, in the engine's vectors.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "query/common/errors.h"
#include "query/common/value.h"
#include "query/execution/physical_operator.h"
#include "query/planner/scan_predicates.h"

namespace argus::storage {
class Store;
}

namespace argus::query {

struct TableInfo;

struct TableFunctionParameter {
  std::string name;
  LogicalType type = LogicalType::kBigInt;
  bool required = true;
  Value default_value;  // when not required; NULL allowed
  std::string doc;      // one line, for table_functions() and the docs
};

// One argument as written: `name` empty for a positional one; `value` already evaluated.
struct TableFunctionArgument {
  std::string name;
  Value value;
  SourcePos pos;
};

// The arguments matched to the function's parameters: values[i] is parameters()[i]'s,
// converted to its type (a default when not given; then positions[i] is the call's).
struct TableFunctionArguments {
  std::vector<Value> values;
  std::vector<SourcePos> positions;
  SourcePos call_pos;  // the function's name in the text
  const Value& operator[](size_t i) const { return values[i]; }
};

// What bind() decided beyond the schema, handed back to execute(). Functions derive from it.
struct TableFunctionBindData {
  virtual ~TableFunctionBindData() = default;
};

struct TableFunctionBinding {
  std::vector<std::string> names;  // output columns
  std::vector<LogicalType> types;
  std::shared_ptr<const TableFunctionBindData> data;  // may be null
  // Output columns the rows come sorted by, ascending, the first most significant (empty:
  // no order promised). A window over the rows in that order need not sort them.
  std::vector<std::string> order = {};
};

// What execute() works with. REQUIRES: everything outlives the returned operator.
struct TableFunctionInput {
  QueryContext& ctx;  // deadline (check() per chunk) and memory cap (MemoryReservation)
  const storage::Store& store;
  const TableFunctionArguments& args;
  const TableFunctionBinding& binding;
  // The binding's columns the query reads, in output order (may be empty: count(*)).
  const std::vector<size_t>& column_ids;
  // For a function with rowsOf(): the WHERE conditions on job, rank and step the planner
  // took out of the query's filter. The function must return only rows they select.
  const ScanPredicates& pushed;
};

class TableFunction {
 public:
  TableFunction(std::string name, std::string doc, std::vector<TableFunctionParameter> parameters)
      : name_(std::move(name)), doc_(std::move(doc)), parameters_(std::move(parameters)) {}
  virtual ~TableFunction() = default;
  TableFunction(const TableFunction&) = delete;
  TableFunction& operator=(const TableFunction&) = delete;

  const std::string& name() const { return name_; }
  const std::string& doc() const { return doc_; }
  const std::vector<TableFunctionParameter>& parameters() const { return parameters_; }
  // "recent_steps(job VARCHAR, last BIGINT = 100, ranks VARCHAR = NULL)", for messages.
  std::string signature() const;

  // Checks the argument values (throws BinderError naming the argument's position) and
  // returns the output schema. Runs without the store: facts about the data (does the job
  // exist?) belong to execute().
  virtual TableFunctionBinding bind(const TableFunctionArguments& args) const = 0;

  // The operator producing binding columns input.column_ids, in that order. Throws
  // ExecutionError for what the store says (an unknown job, a failed read). The operator
  // calls input.ctx.check() once per chunk it produces or consumes.
  virtual PhysicalOperatorPtr execute(const TableFunctionInput& input) const = 0;

  // The store table whose rows the function returns, when it returns such rows with that
  // table's columns in order (recent_steps: steps); null otherwise. Then the planner moves
  // WHERE conditions on job, rank and step into TableFunctionInput::pushed, as for a scan.
  virtual const TableInfo* rowsOf() const { return nullptr; }

 private:
  std::string name_;
  std::string doc_;
  std::vector<TableFunctionParameter> parameters_;
};

// Matches arguments to f's parameters: positional ones in order, then named ones by name;
// defaults for the rest. Converts NULL to any type, BIGINT to DOUBLE and a non-negative
// BIGINT to ID. Throws BinderError naming the argument's position (the call's for a missing
// one) and f's signature for: too many positional arguments, an unknown name, a parameter
// given twice, a required one missing, a value of the wrong type.
TableFunctionArguments matchArguments(const TableFunction& f, const std::vector<TableFunctionArgument>& given, SourcePos call_pos);

}  // namespace argus::query
