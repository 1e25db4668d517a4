#include "query/parser/ast.h"

#include "query/parser/parser.h"

#include <cctype>

namespace argus::query {

namespace {

// A name as the parser reads it back: plain when unquoted text would give the same name
// (lower case, not a reserved word), quoted otherwise.
std::string quoteIdent(const std::string& s) {
  bool plain = !s.empty() && !std::isdigit(static_cast<unsigned char>(s[0])) && !isReservedWord(s);
  for (char c : s) plain = plain && (std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_');
  if (plain) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  return out + "\"";
}

std::string orderText(const OrderItem& o) {
  std::string out = toString(*o.expr) + (o.desc ? " DESC" : " ASC");
  if (o.nulls == OrderItem::Nulls::kFirst) out += " NULLS FIRST";
  if (o.nulls == OrderItem::Nulls::kLast) out += " NULLS LAST";
  return out;
}

std::string boundText(const FrameBound& b) {
  switch (b.kind) {
    case FrameBoundKind::kUnboundedPreceding: return "UNBOUNDED PRECEDING";
    case FrameBoundKind::kPreceding: return Value::dbl(b.offset).toSql() + " PRECEDING";
    case FrameBoundKind::kCurrentRow: return "CURRENT ROW";
    case FrameBoundKind::kFollowing: return Value::dbl(b.offset).toSql() + " FOLLOWING";
    case FrameBoundKind::kUnboundedFollowing: return "UNBOUNDED FOLLOWING";
  }
  return "?";
}

std::string windowText(const WindowSpec& w) {
  std::string out = " OVER (";
  if (!w.partition_by.empty()) {
    out += "PARTITION BY ";
    for (size_t i = 0; i < w.partition_by.size(); ++i) out += (i ? ", " : "") + toString(*w.partition_by[i]);
  }
  if (!w.order_by.empty()) {
    out += std::string(w.partition_by.empty() ? "" : " ") + "ORDER BY ";
    for (size_t i = 0; i < w.order_by.size(); ++i) out += (i ? ", " : "") + orderText(w.order_by[i]);
  }
  if (w.has_frame) out += std::string(w.partition_by.empty() && w.order_by.empty() ? "" : " ") + frameText(w.frame);
  return out + ")";
}

}  // namespace

std::string frameText(const WindowFrame& f) {
  return std::string(f.unit == FrameUnit::kRows ? "ROWS" : "RANGE") + " BETWEEN " + boundText(f.start) + " AND " + boundText(f.end);
}

std::string toString(const ParsedExpr& e) {
  auto child = [&](size_t i) { return toString(*e.children[i]); };
  switch (e.type) {
    case ExprType::kColumn: {
      std::string out;
      for (size_t i = 0; i < e.names.size(); ++i) out += (i ? "." : "") + quoteIdent(e.names[i]);
      return out;
    }
    case ExprType::kStar: return "*";
    case ExprType::kConstant: return e.value.toSql();
    case ExprType::kUnary: return "(" + e.op + (e.op == "NOT" ? " " : "") + child(0) + ")";
    case ExprType::kBinary: return "(" + child(0) + " " + e.op + " " + child(1) + ")";
    case ExprType::kFunction: {
      std::string out = e.op + "(";
      if (e.distinct) out += "DISTINCT ";
      if (e.star_arg) out += "*";
      for (size_t i = 0; i < e.children.size(); ++i) out += (i ? ", " : "") + child(i);
      return out + ")" + (e.window ? windowText(*e.window) : "");
    }
    case ExprType::kCase: {
      std::string out = "CASE";
      size_t i = 0;
      if (e.has_operand) out += " " + child(i++);
      size_t pairs_end = e.children.size() - (e.has_else ? 1 : 0);
      for (; i < pairs_end; i += 2) out += " WHEN " + child(i) + " THEN " + child(i + 1);
      if (e.has_else) out += " ELSE " + child(e.children.size() - 1);
      return out + " END";
    }
    case ExprType::kCast: return "CAST(" + child(0) + " AS " + typeName(e.cast_type) + ")";
    case ExprType::kIsNull: return "(" + child(0) + (e.negated ? " IS NOT NULL)" : " IS NULL)");
    case ExprType::kBetween:
      return "(" + child(0) + (e.negated ? " NOT" : "") + " BETWEEN " + child(1) + " AND " + child(2) + ")";
    case ExprType::kIn: {
      std::string out = "(" + child(0) + (e.negated ? " NOT IN (" : " IN (");
      for (size_t i = 1; i < e.children.size(); ++i) out += (i > 1 ? ", " : "") + child(i);
      return out + "))";
    }
    case ExprType::kLike: return "(" + child(0) + (e.negated ? " NOT LIKE " : " LIKE ") + child(1) + ")";
  }
  return "?";
}

std::string toString(const SelectStatement& s) {
  std::string out;
  if (!s.ctes.empty()) {
    out += "WITH ";
    for (size_t i = 0; i < s.ctes.size(); ++i) out += (i ? ", " : "") + quoteIdent(s.ctes[i].name) + " AS (" + toString(*s.ctes[i].query) + ")";
    out += " ";
  }
  out += s.distinct ? "SELECT DISTINCT " : "SELECT ";
  for (size_t i = 0; i < s.select_list.size(); ++i) {
    out += (i ? ", " : "") + toString(*s.select_list[i].expr);
    if (!s.select_list[i].alias.empty()) out += " AS " + quoteIdent(s.select_list[i].alias);
  }
  if (s.from) {
    out += " FROM ";
    const TableRef& f = *s.from;
    switch (f.kind) {
      case TableRef::Kind::kTable: out += quoteIdent(f.name); break;
      case TableRef::Kind::kSubquery: out += "(" + toString(*f.subquery) + ")"; break;
      case TableRef::Kind::kFunction:
        out += quoteIdent(f.name) + "(";
        for (size_t i = 0; i < f.args.size(); ++i) {
          out += (i ? ", " : "") + (f.args[i].name.empty() ? "" : quoteIdent(f.args[i].name) + " => ") + toString(*f.args[i].expr);
        }
        out += ")";
        break;
    }
    if (!s.from->alias.empty()) out += " AS " + quoteIdent(s.from->alias);
  }
  if (s.where) out += " WHERE " + toString(*s.where);
  if (!s.group_by.empty()) {
    out += " GROUP BY ";
    for (size_t i = 0; i < s.group_by.size(); ++i) out += (i ? ", " : "") + toString(*s.group_by[i]);
  }
  if (s.having) out += " HAVING " + toString(*s.having);
  if (!s.order_by.empty()) {
    out += " ORDER BY ";
    for (size_t i = 0; i < s.order_by.size(); ++i) out += (i ? ", " : "") + orderText(s.order_by[i]);
  }
  if (s.limit >= 0) out += " LIMIT " + std::to_string(s.limit);
  if (s.offset > 0) out += " OFFSET " + std::to_string(s.offset);
  return out;
}

}  // namespace argus::query
