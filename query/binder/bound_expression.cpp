#include "query/binder/bound_expression.h"

#include <cctype>

namespace argus::query {

BoundExprPtr makeColumnRef(size_t column, LogicalType type, SourcePos pos) {
  auto e = std::make_unique<BoundExpr>();
  e->kind = BoundExprKind::kColumnRef;
  e->column = column;
  e->type = type;
  e->pos = pos;
  return e;
}

BoundExprPtr makeConstant(Value v, SourcePos pos) {
  auto e = std::make_unique<BoundExpr>();
  e->kind = BoundExprKind::kConstant;
  e->type = v.type();
  e->value = std::move(v);
  e->pos = pos;
  return e;
}

BoundExprPtr copyExpr(const BoundExpr& e) {
  auto c = std::make_unique<BoundExpr>();
  c->kind = e.kind;
  c->type = e.type;
  c->pos = e.pos;
  c->column = e.column;
  c->value = e.value;
  c->function = e.function;
  c->negated = e.negated;
  c->has_else = e.has_else;
  for (const auto& ch : e.children) c->children.push_back(copyExpr(*ch));
  return c;
}

bool sameExpr(const BoundExpr& a, const BoundExpr& b) {
  if (a.kind != b.kind || a.type != b.type || a.negated != b.negated || a.has_else != b.has_else || a.children.size() != b.children.size()) {
    return false;
  }
  switch (a.kind) {
    case BoundExprKind::kColumnRef:
      if (a.column != b.column) return false;
      break;
    case BoundExprKind::kConstant:
      if (!(a.value == b.value)) return false;
      break;
    case BoundExprKind::kFunction:
      if (a.function != b.function) return false;
      break;
    default: break;
  }
  for (size_t i = 0; i < a.children.size(); ++i) {
    if (!sameExpr(*a.children[i], *b.children[i])) return false;
  }
  return true;
}

bool sameExprs(const std::vector<BoundExprPtr>& a, const std::vector<BoundExprPtr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!sameExpr(*a[i], *b[i])) return false;
  }
  return true;
}

std::string exprText(const BoundExpr& e, const std::vector<std::string>& names) {
  auto child = [&](size_t i) { return exprText(*e.children[i], names); };
  switch (e.kind) {
    case BoundExprKind::kColumnRef: return e.column < names.size() ? names[e.column] : "#" + std::to_string(e.column);
    case BoundExprKind::kConstant: return e.value.toSql();
    case BoundExprKind::kFunction: {
      const std::string& n = e.function->name;
      bool op = !n.empty() && !std::isalpha(static_cast<unsigned char>(n[0]));
      if (op && e.children.size() == 2) return "(" + child(0) + " " + n + " " + child(1) + ")";
      if (op && e.children.size() == 1) return "(" + n + child(0) + ")";
      std::string out = n + "(";
      for (size_t i = 0; i < e.children.size(); ++i) out += (i ? ", " : "") + child(i);
      return out + ")";
    }
    case BoundExprKind::kAnd: return "(" + child(0) + " AND " + child(1) + ")";
    case BoundExprKind::kOr: return "(" + child(0) + " OR " + child(1) + ")";
    case BoundExprKind::kNot: return "(NOT " + child(0) + ")";
    case BoundExprKind::kIsNull: return "(" + child(0) + (e.negated ? " IS NOT NULL)" : " IS NULL)");
    case BoundExprKind::kCase: {
      std::string out = "CASE";
      size_t pairs = (e.children.size() - (e.has_else ? 1 : 0)) / 2;
      for (size_t i = 0; i < pairs; ++i) out += " WHEN " + child(2 * i) + " THEN " + child(2 * i + 1);
      if (e.has_else) out += " ELSE " + child(e.children.size() - 1);
      return out + " END";
    }
    case BoundExprKind::kCast: return "CAST(" + child(0) + " AS " + typeName(e.type) + ")";
    case BoundExprKind::kIn: {
      std::string out = "(" + child(0) + (e.negated ? " NOT IN (" : " IN (");
      for (size_t i = 1; i < e.children.size(); ++i) out += (i > 1 ? ", " : "") + child(i);
      return out + "))";
    }
  }
  return "?";
}

}  // namespace argus::query
