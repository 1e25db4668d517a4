// Bound expressions: names resolved to column indices of the operator's input, functions to
// overloads, every node typed. What the planner rewrites and the executor evaluates.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "query/common/errors.h"
#include "query/common/value.h"
#include "query/function/scalar_function.h"

namespace argus::query {

enum class BoundExprKind : uint8_t {
  kColumnRef,  // column: index into the input chunk
  kConstant,   // value
  kFunction,   // function(children...)
  kAnd,        // children[0] AND children[1] (three-valued)
  kOr,
  kNot,
  kIsNull,     // children[0] IS [NOT] NULL (negated)
  kCase,       // (when, then)... [else] (has_else)
  kCast,       // children[0] to type
  kIn,         // children[0] [NOT] IN (children[1..]), one type
};

struct BoundExpr {
  BoundExprKind kind = BoundExprKind::kConstant;
  LogicalType type = LogicalType::kNull;
  SourcePos pos;
  size_t column = 0;
  Value value;
  const ScalarFunction* function = nullptr;
  bool negated = false;
  bool has_else = false;
  std::vector<std::unique_ptr<BoundExpr>> children;
};
using BoundExprPtr = std::unique_ptr<BoundExpr>;

BoundExprPtr makeColumnRef(size_t column, LogicalType type, SourcePos pos = {});
BoundExprPtr makeConstant(Value v, SourcePos pos = {});
BoundExprPtr copyExpr(const BoundExpr& e);
// Structural equality (positions ignored): GROUP BY matching, DISTINCT aggregates.
bool sameExpr(const BoundExpr& a, const BoundExpr& b);
// sameExpr for each pair of two lists of the same length.
bool sameExprs(const std::vector<BoundExprPtr>& a, const std::vector<BoundExprPtr>& b);
// Calls fn(BoundExpr&) on every node, children first.
template <typename Fn>
void visitExpr(BoundExpr& e, Fn&& fn) {
  for (auto& c : e.children) visitExpr(*c, fn);
  fn(e);
}
// Text for EXPLAIN; column refs print as names[column].
std::string exprText(const BoundExpr& e, const std::vector<std::string>& names);

}  // namespace argus::query
