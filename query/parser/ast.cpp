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
    case ExprType::kStar: return e.names.empty() ? "*" : quoteIdent(e.names[0]) + ".*";
    case ExprType::kConstant: return e.value.toSql();
    case ExprType::kUnary: {
      // A space after NOT, and after a minus before a negative literal: "--" opens a comment.
      const std::string operand = child(0);
      const bool space = e.op == "NOT" || (e.op == "-" && operand.starts_with('-'));
      return "(" + e.op + (space ? " " : "") + operand + ")";
    }
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

namespace {

std::string tableRefText(const TableRef& r) {
  if (r.kind == TableRef::Kind::kJoin) {
    static constexpr const char* kJoinWords[] = {" JOIN ", " LEFT JOIN ", " CROSS JOIN "};
    // Joins are left-deep (the right item is never a join), so the text needs no parentheses
    // and parses back to the same tree.
    std::string out = tableRefText(*r.left) + kJoinWords[static_cast<int>(r.join_type)] + tableRefText(*r.right);
    if (r.condition) out += " ON " + toString(*r.condition);
    if (!r.using_columns.empty()) {
      out += " USING (";
      for (size_t i = 0; i < r.using_columns.size(); ++i) out += (i ? ", " : "") + quoteIdent(r.using_columns[i]);
      out += ")";
    }
    return out;
  }
  std::string out;
  switch (r.kind) {
    case TableRef::Kind::kTable: out = quoteIdent(r.name); break;
    case TableRef::Kind::kSubquery: out = "(" + toString(*r.subquery) + ")"; break;
    case TableRef::Kind::kFunction:
      out = quoteIdent(r.name) + "(";
      for (size_t i = 0; i < r.args.size(); ++i) {
        out += (i ? ", " : "") + (r.args[i].name.empty() ? "" : quoteIdent(r.args[i].name) + " => ") + toString(*r.args[i].expr);
      }
      out += ")";
      break;
    case TableRef::Kind::kJoin: break;  // above
  }
  if (!r.alias.empty()) out += " AS " + quoteIdent(r.alias);
  return out;
}

}  // namespace

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
  if (s.from) out += " FROM " + tableRefText(*s.from);
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
