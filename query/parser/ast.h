// The parser's output: statements and expressions as written, with their source positions
// (docs/query/language.md, "Grammar"). Names are not resolved here; the binder does that.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "query/common/errors.h"
#include "query/common/types.h"
#include "query/common/value.h"

namespace argus::query {

enum class ExprType : uint8_t {
  kColumn,    // names: [table,] column
  kStar,      // * in a select list or count(*); x.* (names: [table]) in a select list
  kConstant,  // value
  kUnary,     // op: "-", "+", "NOT"; children[0]
  kBinary,    // op: + - * / // % = <> < <= > >= || AND OR; children[0..1]  ("==" and "!=" come as "=" and "<>")
  kFunction,  // op: lower-case name; children: arguments; distinct; star_arg for f(*); window for f(...) OVER (...)
  kCase,      // children: [operand] (when, then)... [else]; has_operand, has_else
  kCast,      // children[0] AS cast_type
  kIsNull,    // children[0] IS [NOT] NULL (negated)
  kBetween,   // children[0] [NOT] BETWEEN children[1] AND children[2]
  kIn,        // children[0] [NOT] IN (children[1..])
  kLike,      // children[0] [NOT] LIKE children[1]
};

struct WindowSpec;

struct ParsedExpr {
  ExprType type = ExprType::kConstant;
  SourcePos pos;      // where the expression's text starts
  SourcePos op_pos;   // the operator, function name or keyword errors point at
  uint32_t end = 0;   // byte offset just past the expression's text
  uint32_t height = 1;  // levels of the tree below and including this node
  std::string op;
  std::vector<std::string> names;
  Value value;
  LogicalType cast_type = LogicalType::kNull;
  bool negated = false;
  bool distinct = false;
  bool star_arg = false;
  bool has_operand = false;
  bool has_else = false;
  std::vector<std::unique_ptr<ParsedExpr>> children;
  std::unique_ptr<WindowSpec> window;  // kFunction called with OVER
};
using ParsedExprPtr = std::unique_ptr<ParsedExpr>;

struct SelectStatement;

struct SelectItem {
  ParsedExprPtr expr;
  std::string alias;  // empty: named after the expression's text
  SourcePos alias_pos;
};

struct OrderItem {
  ParsedExprPtr expr;
  bool desc = false;
  enum class Nulls : uint8_t { kDefault, kFirst, kLast } nulls = Nulls::kDefault;
};

// A window frame (docs/query/language.md, "Window functions"). Offsets are non-negative:
// whole numbers for ROWS, any number for RANGE.
enum class FrameUnit : uint8_t { kRows, kRange };
enum class FrameBoundKind : uint8_t { kUnboundedPreceding, kPreceding, kCurrentRow, kFollowing, kUnboundedFollowing };
struct FrameBound {
  FrameBoundKind kind = FrameBoundKind::kCurrentRow;
  double offset = 0;  // kPreceding, kFollowing
  SourcePos pos;
};
struct WindowFrame {
  FrameUnit unit = FrameUnit::kRange;
  FrameBound start{FrameBoundKind::kUnboundedPreceding, 0, {}};
  FrameBound end{FrameBoundKind::kCurrentRow, 0, {}};
};

// OVER ([PARTITION BY ...] [ORDER BY ...] [frame]).
struct WindowSpec {
  SourcePos pos;  // OVER
  std::vector<ParsedExprPtr> partition_by;
  std::vector<OrderItem> order_by;
  bool has_frame = false;  // false: the default frame (see WindowFrame's defaults and the doc)
  WindowFrame frame;
};

// An argument of a table function call: `expr` or `name => expr`.
struct TableFunctionArg {
  std::string name;  // empty: positional
  SourcePos pos;     // the argument's start (its name when named)
  ParsedExprPtr expr;
};

// A FROM item: a table or WITH name, a subquery, a table function call, or a join of two
// items. Joins chain left-deep: `a JOIN b JOIN c` is (a JOIN b) JOIN c; `FROM a, b` is a
// CROSS JOIN.
enum class JoinType : uint8_t { kInner, kLeft, kCross };

struct TableRef {
  enum class Kind : uint8_t { kTable, kSubquery, kFunction, kJoin } kind = Kind::kTable;
  std::string name;  // kTable, kFunction
  std::unique_ptr<SelectStatement> subquery;
  std::vector<TableFunctionArg> args;  // kFunction: positional ones first
  std::string alias;
  SourcePos pos;
  // kJoin: ON condition or USING columns (neither for CROSS).
  JoinType join_type = JoinType::kInner;
  std::unique_ptr<TableRef> left, right;
  ParsedExprPtr condition;
  std::vector<std::string> using_columns;
  std::vector<SourcePos> using_pos;
};

struct CommonTableExpr {
  std::string name;
  SourcePos pos;
  std::unique_ptr<SelectStatement> query;
};

struct SelectStatement {
  SourcePos pos;
  std::vector<CommonTableExpr> ctes;
  bool distinct = false;
  std::vector<SelectItem> select_list;
  std::unique_ptr<TableRef> from;  // null: one row, no columns (SELECT 1 + 1)
  ParsedExprPtr where;
  std::vector<ParsedExprPtr> group_by;
  ParsedExprPtr having;
  std::vector<OrderItem> order_by;
  int64_t limit = -1;  // -1: none
  int64_t offset = 0;
};

struct Statement {
  bool explain = false;
  bool analyze = false;  // EXPLAIN ANALYZE: run the query, then the plan with what each operator produced
  std::unique_ptr<SelectStatement> select;
};

// Canonical text, every operator parenthesized: for tests of precedence and round trips.
std::string toString(const ParsedExpr& e);
std::string toString(const SelectStatement& s);
// "ROWS BETWEEN 10 PRECEDING AND CURRENT ROW".
std::string frameText(const WindowFrame& f);

}  // namespace argus::query
