// BoundSelect: a SELECT with every name resolved and every expression typed, in the order
// the clauses run: source -> WHERE -> GROUP BY/aggregates -> HAVING -> projection ->
// DISTINCT -> ORDER BY -> LIMIT/OFFSET. The planner turns it into operators.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "query/binder/bound_expression.h"
#include "query/binder/catalog.h"
#include "query/function/aggregate_function.h"
#include "query/function/table_function.h"
#include "query/function/window_functions.h"
#include "query/parser/ast.h"

namespace argus::query {

struct BoundSelect;

struct BoundAggregate {
  const AggregateFunction* function = nullptr;
  std::vector<BoundExprPtr> args;  // per-row arguments, over the source's columns
  std::vector<Value> constants;    // constant arguments (quantile's q)
  bool distinct = false;
  SourcePos pos;
  std::string text;  // as written, for EXPLAIN and column names
  LogicalType type = LogicalType::kNull;
};

// f(args) OVER (PARTITION BY ... ORDER BY ... frame), over the columns of the window
// stage's input: the source's, or [groups..., aggregates...] when aggregated.
struct BoundWindow {
  WindowCall call;
  std::vector<BoundExprPtr> args;  // per-row arguments
  std::vector<BoundExprPtr> partitions;
  std::vector<BoundExprPtr> orders;
  std::vector<bool> desc, nulls_first;  // per ORDER BY key
  WindowFrame frame;                    // the default one filled in
  bool presorted = false;               // the planner found the input in the window's order
  std::string text;                     // as written, for EXPLAIN and column names
};

struct BoundSource {
  enum class Kind : uint8_t { kNone, kTable, kSubquery, kTableFunction, kJoin } kind = Kind::kNone;
  const TableInfo* table = nullptr;       // kTable
  std::unique_ptr<BoundSelect> subquery;  // kSubquery (FROM (...) and WITH)
  const TableFunction* function = nullptr;  // kTableFunction, with its matched arguments and bind()'s result
  TableFunctionArguments function_args;
  TableFunctionBinding function_binding;
  std::vector<std::string> names;         // the columns it produces
  std::vector<LogicalType> types;
  // Per column: the table name or alias that qualifies it (`x` in x.col; empty for an
  // unnamed subquery), and whether SELECT * and unqualified names skip it (the right
  // side's copy of a USING column).
  std::vector<std::string> qualifiers;
  std::vector<bool> hidden;
  // kJoin: the columns are [left's..., right's...]; condition is over them (null: CROSS).
  JoinType join_type = JoinType::kInner;
  std::unique_ptr<BoundSource> left, right;
  BoundExprPtr condition;
};

struct OrderKey {
  size_t column = 0;  // index into the projection
  bool desc = false;
  bool nulls_first = false;
};

struct BoundSelect {
  BoundSource source;
  BoundExprPtr where;  // over the source's columns; null: none
  bool aggregated = false;
  std::vector<BoundExprPtr> groups;  // over the source's columns
  std::vector<std::string> group_names;
  std::vector<BoundAggregate> aggregates;
  BoundExprPtr having;  // over [groups..., aggregates...]
  // Evaluated after HAVING; window i's result is column (width of the input) + i.
  std::vector<BoundWindow> windows;
  // Over the source's columns, or over [groups..., aggregates...] when aggregated, then the
  // windows' results. The first `visible` are the result; the rest are ORDER BY keys not in
  // the select list.
  std::vector<BoundExprPtr> projection;
  std::vector<std::string> names;
  size_t visible = 0;
  bool distinct = false;
  std::vector<OrderKey> order;
  int64_t limit = -1;  // -1: none
  int64_t offset = 0;
};

}  // namespace argus::query
