#include "query/parser/parser.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "query/parser/lexer.h"

namespace argus::query {

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

constexpr std::string_view kReserved[] = {
    "ALL", "AND", "AS", "ASC", "BETWEEN", "BY", "CASE", "CAST", "CROSS", "DESC", "DISTINCT", "ELSE", "END",
    "EXCEPT", "EXPLAIN", "FALSE", "FROM", "FULL", "GROUP", "HAVING", "IN", "INNER", "INTERSECT", "IS", "JOIN",
    "LEFT", "LIKE", "LIMIT", "NATURAL", "NOT", "NULL", "OFFSET", "ON", "OR", "ORDER", "OUTER", "RIGHT",
    "SELECT", "THEN", "TRUE", "UNION", "USING", "WHEN", "WHERE", "WITH",
};

class Parser {
 public:
  Parser(std::string_view sql, std::vector<Token> tokens) : sql_(sql), tokens_(std::move(tokens)) {}

  Statement parseStatement() {
    Statement st;
    const char* expected = "expected SELECT, WITH or EXPLAIN";
    if (isKeyword("EXPLAIN")) {
      next();
      st.explain = true;
      expected = "expected SELECT, WITH or ANALYZE after EXPLAIN";
      if (isKeyword("ANALYZE")) {
        next();
        st.analyze = true;
        expected = "expected SELECT or WITH after EXPLAIN ANALYZE";
      }
    }
    if (!isKeyword("SELECT") && !isKeyword("WITH")) fail(expected);
    st.select = parseQuery();
    while (isSymbol(";")) next();
    if (cur().kind != TokenKind::kEnd) {
      fail(isSymbol(")") ? "unbalanced ')'" : "expected the end of the query (one statement at a time)");
    }
    return st;
  }

 private:
  // --- tokens ---
  const Token& cur() const { return tokens_[i_]; }
  const Token& peekTok(size_t ahead = 1) const { return tokens_[std::min(i_ + ahead, tokens_.size() - 1)]; }
  const Token& next() {
    const Token& t = tokens_[i_];
    if (i_ + 1 < tokens_.size()) ++i_;
    return t;
  }
  uint32_t prevEnd() const { return i_ == 0 ? 0 : tokens_[i_ - 1].end; }
  static bool keywordIs(const Token& t, std::string_view kw) {
    if (t.kind != TokenKind::kIdentifier || t.text.size() != kw.size()) return false;
    for (size_t i = 0; i < kw.size(); ++i) {
      if (std::toupper(static_cast<unsigned char>(t.text[i])) != kw[i]) return false;
    }
    return true;
  }
  bool isKeyword(std::string_view kw) const { return keywordIs(cur(), kw); }
  bool isSymbol(std::string_view s) const { return cur().kind == TokenKind::kSymbol && cur().text == s; }
  bool acceptKeyword(std::string_view kw) {
    if (!isKeyword(kw)) return false;
    next();
    return true;
  }
  bool acceptSymbol(std::string_view s) {
    if (!isSymbol(s)) return false;
    next();
    return true;
  }
  void expectKeyword(std::string_view kw, const char* context) {
    if (!acceptKeyword(kw)) fail(std::string("expected ") + std::string(kw) + " " + context);
  }
  void expectSymbol(std::string_view s, const char* context) {
    if (!acceptSymbol(s)) fail("expected '" + std::string(s) + "' " + context);
  }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case TokenKind::kEnd: return "the end of the query";
      case TokenKind::kString: return "string '" + t.value + "'";
      case TokenKind::kIdentifier:
        if (isReservedWord(t.text)) return "keyword " + upper(t.text);
        return "'" + std::string(t.text) + "'";
      default: return "'" + std::string(t.text) + "'";
    }
  }
  [[noreturn]] void fail(const std::string& what) const { throw ParserError(cur().pos, what + ", found " + describe(cur())); }

  struct DepthGuard {
    explicit DepthGuard(Parser* p) : p_(p) {
      if (++p_->depth_ > kMaxParseDepth) {
        throw ParserError(p_->cur().pos, "query nested too deeply (more than " + std::to_string(kMaxParseDepth) + " levels)");
      }
    }
    ~DepthGuard() { --p_->depth_; }
    Parser* p_;
  };

  // Identifier (quoted or not reserved) -> name. Unquoted names are case-insensitive and
  // folded to lower case.
  bool atName() const {
    return cur().kind == TokenKind::kQuotedIdentifier || (cur().kind == TokenKind::kIdentifier && !isReservedWord(cur().text));
  }
  // True when the token after the current one is a name or a literal: the current name
  // cannot then be an alias (an alias is followed by a keyword, a symbol or the end).
  bool nameFollows() const {
    const Token& t = peekTok();
    return t.kind == TokenKind::kQuotedIdentifier || t.kind == TokenKind::kString || t.kind == TokenKind::kInteger ||
           t.kind == TokenKind::kFloat || (t.kind == TokenKind::kIdentifier && !isReservedWord(t.text));
  }
  std::string parseName(const char* what) {
    if (cur().kind == TokenKind::kQuotedIdentifier) return next().value;
    if (cur().kind == TokenKind::kIdentifier && !isReservedWord(cur().text)) return lower(next().text);
    fail(std::string("expected ") + what);
  }

  // --- statements ---
  std::unique_ptr<SelectStatement> parseQuery() {
    DepthGuard guard(this);
    auto s = std::make_unique<SelectStatement>();
    s->pos = cur().pos;
    if (acceptKeyword("WITH")) {
      do {
        CommonTableExpr cte;
        cte.pos = cur().pos;
        cte.name = parseName("a name for the WITH query");
        expectKeyword("AS", "after the WITH query's name");
        expectSymbol("(", "before the WITH query");
        cte.query = parseQuery();
        expectSymbol(")", "after the WITH query");
        s->ctes.push_back(std::move(cte));
      } while (acceptSymbol(","));
    }
    expectKeyword("SELECT", "to start the query");
    if (acceptKeyword("DISTINCT")) {
      s->distinct = true;
    } else {
      acceptKeyword("ALL");
    }
    do {
      SelectItem item;
      if (isSymbol("*")) {
        item.expr = std::make_unique<ParsedExpr>();
        item.expr->type = ExprType::kStar;
        item.expr->pos = item.expr->op_pos = cur().pos;
        next();
        item.expr->end = prevEnd();
      } else {
        item.expr = parseExpr();
        if (item.expr->type == ExprType::kStar) {
          // x.*: no alias, no operators around it.
        } else if (acceptKeyword("AS")) {
          item.alias_pos = cur().pos;
          item.alias = parseName("a column alias after AS");
        } else if (atName()) {
          // `SELECT a form steps`: a name followed by another name is a misspelling, not an alias.
          if (nameFollows()) fail("expected ',', FROM or the end of the select list");
          item.alias_pos = cur().pos;
          item.alias = parseName("a column alias");
        }
      }
      s->select_list.push_back(std::move(item));
    } while (acceptSymbol(","));

    if (acceptKeyword("FROM")) {
      s->from = parseFrom();
    }
    if (acceptKeyword("WHERE")) s->where = parseExpr();
    if (acceptKeyword("GROUP")) {
      expectKeyword("BY", "after GROUP");
      do s->group_by.push_back(parseExpr());
      while (acceptSymbol(","));
    }
    if (acceptKeyword("HAVING")) s->having = parseExpr();
    if (isKeyword("UNION") || isKeyword("EXCEPT") || isKeyword("INTERSECT")) fail("set operations are not supported in version 1 of the language");
    if (acceptKeyword("ORDER")) {
      expectKeyword("BY", "after ORDER");
      do s->order_by.push_back(parseOrderItem());
      while (acceptSymbol(","));
    }
    if (acceptKeyword("LIMIT")) {
      s->limit = parseCount("LIMIT");
      if (acceptKeyword("OFFSET")) s->offset = parseCount("OFFSET");
    } else if (acceptKeyword("OFFSET")) {
      s->offset = parseCount("OFFSET");
    }
    return s;
  }

  OrderItem parseOrderItem() {
    OrderItem o;
    o.expr = parseExpr();
    if (acceptKeyword("DESC")) {
      o.desc = true;
    } else {
      acceptKeyword("ASC");
    }
    if (acceptKeyword("NULLS")) {
      if (acceptKeyword("FIRST")) {
        o.nulls = OrderItem::Nulls::kFirst;
      } else if (acceptKeyword("LAST")) {
        o.nulls = OrderItem::Nulls::kLast;
      } else {
        fail("expected FIRST or LAST after NULLS");
      }
    }
    return o;
  }

  int64_t parseCount(const char* clause) {
    if (cur().kind != TokenKind::kInteger) fail(std::string("expected a non-negative integer after ") + clause);
    uint64_t v = 0;
    std::string_view t = cur().text;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || v > static_cast<uint64_t>(INT64_MAX)) fail(std::string(clause) + " is too large");
    next();
    return static_cast<int64_t>(v);
  }

  // FROM item { , item | [INNER] JOIN item ON/USING | LEFT [OUTER] JOIN item ON/USING | CROSS JOIN item },
  // left-deep.
  std::unique_ptr<TableRef> parseFrom() {
    std::unique_ptr<TableRef> left = parseTableRef();
    for (size_t sources = 1;; ++sources) {
      auto join = std::make_unique<TableRef>();
      join->kind = TableRef::Kind::kJoin;
      join->pos = cur().pos;
      if (acceptSymbol(",")) {
        join->join_type = JoinType::kCross;
      } else if (acceptKeyword("CROSS")) {
        expectKeyword("JOIN", "after CROSS");
        join->join_type = JoinType::kCross;
      } else if (acceptKeyword("LEFT")) {
        acceptKeyword("OUTER");
        expectKeyword("JOIN", "after LEFT");
        join->join_type = JoinType::kLeft;
      } else if (acceptKeyword("INNER")) {
        expectKeyword("JOIN", "after INNER");
      } else if (!acceptKeyword("JOIN")) {
        if (isKeyword("RIGHT") || isKeyword("FULL") || isKeyword("NATURAL")) {
          fail("only [INNER] JOIN, LEFT [OUTER] JOIN and CROSS JOIN are supported");
        }
        return left;
      }
      // Binding and planning recurse once per join.
      if (sources == kMaxJoinSources) fail("a FROM clause joins at most " + std::to_string(kMaxJoinSources) + " tables");
      join->left = std::move(left);
      join->right = parseTableRef();
      if (join->join_type != JoinType::kCross) {
        if (acceptKeyword("ON")) {
          join->condition = parseExpr();
        } else if (acceptKeyword("USING")) {
          expectSymbol("(", "after USING");
          do {
            join->using_pos.push_back(cur().pos);
            join->using_columns.push_back(parseName("a column name in USING"));
          } while (acceptSymbol(","));
          expectSymbol(")", "after the USING columns");
        } else {
          fail("expected ON or USING after the joined table");
        }
      } else if (isKeyword("ON") || isKeyword("USING")) {
        fail("a CROSS JOIN takes no ON or USING");
      }
      left = std::move(join);
    }
  }

  std::unique_ptr<TableRef> parseTableRef() {
    auto ref = std::make_unique<TableRef>();
    ref->pos = cur().pos;
    if (acceptSymbol("(")) {
      if (!isKeyword("SELECT") && !isKeyword("WITH")) fail("expected a query (SELECT ...) in parentheses after FROM");
      ref->kind = TableRef::Kind::kSubquery;
      ref->subquery = parseQuery();
      expectSymbol(")", "after the subquery");
    } else {
      ref->name = parseName("a table name after FROM");
      if (acceptSymbol("(")) {
        ref->kind = TableRef::Kind::kFunction;
        parseTableFunctionArgs(ref.get());
      }
    }
    if (acceptKeyword("AS")) {
      ref->alias = parseName("a table alias after AS");
    } else if (atName()) {
      if (nameFollows()) fail("expected JOIN, WHERE, GROUP BY, ORDER BY, LIMIT or the end of the query after the table");
      ref->alias = parseName("a table alias");
    }
    return ref;
  }

  // f(arg, ..., name => arg, ...) after the '(': positional arguments, then named ones.
  void parseTableFunctionArgs(TableRef* ref) {
    DepthGuard guard(this);
    if (!acceptSymbol(")")) {
      do {
        TableFunctionArg arg;
        arg.pos = cur().pos;
        if (atName() && peekTok().kind == TokenKind::kSymbol && peekTok().text == "=>") {
          arg.name = parseName("a parameter name");
          next();
        } else if (!ref->args.empty() && !ref->args.back().name.empty()) {
          fail("expected a named argument (name => value): positional arguments come first");
        }
        arg.expr = parseExpr();
        ref->args.push_back(std::move(arg));
      } while (acceptSymbol(","));
      expectSymbol(")", "to close the table function's arguments");
    }
  }

  // --- expressions, lowest precedence first ---
  ParsedExprPtr parseExpr() {
    DepthGuard guard(this);
    return parseOr();
  }

  // Sets e's height from its children's; refuses trees taller than kMaxExprHeight (long
  // operator chains build them without recursion, and later passes walk them recursively).
  ParsedExprPtr seal(ParsedExprPtr e) const {
    uint32_t h = 0;
    for (const auto& c : e->children) h = std::max(h, c->height);
    e->height = h + 1;
    if (e->height > kMaxExprHeight) {
      throw ParserError(e->op_pos, "expression nested too deeply (more than " + std::to_string(kMaxExprHeight) + " levels)");
    }
    return e;
  }

  ParsedExprPtr makeBinary(std::string op, SourcePos op_pos, ParsedExprPtr l, ParsedExprPtr r) {
    auto e = std::make_unique<ParsedExpr>();
    e->type = ExprType::kBinary;
    e->op = std::move(op);
    e->pos = l->pos;
    e->op_pos = op_pos;
    e->end = r->end;
    e->children.push_back(std::move(l));
    e->children.push_back(std::move(r));
    return seal(std::move(e));
  }

  ParsedExprPtr parseOr() {
    ParsedExprPtr l = parseAnd();
    while (isKeyword("OR")) {
      SourcePos p = next().pos;
      l = makeBinary("OR", p, std::move(l), parseAnd());
    }
    return l;
  }

  ParsedExprPtr parseAnd() {
    ParsedExprPtr l = parseNot();
    while (isKeyword("AND")) {
      SourcePos p = next().pos;
      l = makeBinary("AND", p, std::move(l), parseNot());
    }
    return l;
  }

  ParsedExprPtr parseNot() {
    if (isKeyword("NOT")) {
      DepthGuard guard(this);
      SourcePos p = next().pos;
      auto e = std::make_unique<ParsedExpr>();
      e->type = ExprType::kUnary;
      e->op = "NOT";
      e->pos = e->op_pos = p;
      e->children.push_back(parseNot());
      e->end = e->children[0]->end;
      return seal(std::move(e));
    }
    return parseComparison();
  }

  ParsedExprPtr parseComparison() {
    ParsedExprPtr l = parseConcat();
    for (;;) {
      if (cur().kind == TokenKind::kSymbol) {
        std::string_view s = cur().text;
        if (s == "=" || s == "==" || s == "<>" || s == "!=" || s == "<" || s == "<=" || s == ">" || s == ">=") {
          SourcePos p = next().pos;
          std::string op = s == "==" ? "=" : s == "!=" ? "<>" : std::string(s);
          l = makeBinary(op, p, std::move(l), parseConcat());
          continue;
        }
        return l;
      }
      SourcePos p = cur().pos;
      if (acceptKeyword("IS")) {
        auto e = std::make_unique<ParsedExpr>();
        e->type = ExprType::kIsNull;
        e->negated = acceptKeyword("NOT");
        expectKeyword("NULL", "after IS (IS [NOT] NULL)");
        e->pos = l->pos;
        e->op_pos = p;
        e->end = prevEnd();
        e->children.push_back(std::move(l));
        l = seal(std::move(e));
        continue;
      }
      bool negated = false;
      if (isKeyword("NOT") && (keywordIs(peekTok(), "BETWEEN") || keywordIs(peekTok(), "IN") || keywordIs(peekTok(), "LIKE"))) {
        next();
        negated = true;
      }
      if (acceptKeyword("BETWEEN")) {
        auto e = std::make_unique<ParsedExpr>();
        e->type = ExprType::kBetween;
        e->negated = negated;
        e->pos = l->pos;
        e->op_pos = p;
        e->children.push_back(std::move(l));
        e->children.push_back(parseConcat());
        expectKeyword("AND", "in BETWEEN ... AND ...");
        e->children.push_back(parseConcat());
        e->end = e->children.back()->end;
        l = seal(std::move(e));
        continue;
      }
      if (acceptKeyword("IN")) {
        auto e = std::make_unique<ParsedExpr>();
        e->type = ExprType::kIn;
        e->negated = negated;
        e->pos = l->pos;
        e->op_pos = p;
        e->children.push_back(std::move(l));
        expectSymbol("(", "after IN");
        if (isKeyword("SELECT") || isKeyword("WITH")) fail("subqueries in IN are not supported in version 1 of the language");
        do e->children.push_back(parseExpr());
        while (acceptSymbol(","));
        expectSymbol(")", "to close the IN list");
        e->end = prevEnd();
        l = seal(std::move(e));
        continue;
      }
      if (acceptKeyword("LIKE")) {
        auto e = std::make_unique<ParsedExpr>();
        e->type = ExprType::kLike;
        e->negated = negated;
        e->pos = l->pos;
        e->op_pos = p;
        e->children.push_back(std::move(l));
        e->children.push_back(parseConcat());
        e->end = e->children.back()->end;
        l = seal(std::move(e));
        continue;
      }
      return l;
    }
  }

  ParsedExprPtr parseConcat() {
    ParsedExprPtr l = parseAdditive();
    while (isSymbol("||")) {
      SourcePos p = next().pos;
      l = makeBinary("||", p, std::move(l), parseAdditive());
    }
    return l;
  }

  ParsedExprPtr parseAdditive() {
    ParsedExprPtr l = parseMultiplicative();
    while (isSymbol("+") || isSymbol("-")) {
      std::string op(cur().text);
      SourcePos p = next().pos;
      l = makeBinary(op, p, std::move(l), parseMultiplicative());
    }
    return l;
  }

  ParsedExprPtr parseMultiplicative() {
    ParsedExprPtr l = parseUnary();
    while (isSymbol("*") || isSymbol("/") || isSymbol("//") || isSymbol("%")) {
      std::string op(cur().text);
      SourcePos p = next().pos;
      l = makeBinary(op, p, std::move(l), parseUnary());
    }
    return l;
  }

  ParsedExprPtr parseUnary() {
    if (isSymbol("-") || isSymbol("+")) {
      DepthGuard guard(this);
      std::string op(cur().text);
      SourcePos p = next().pos;
      ParsedExprPtr child = parseUnary();
      if (child->type == ExprType::kConstant && !child->value.isNull()) {
        if (op == "+" && isNumeric(child->value.type())) {
          child->pos = p;
          return child;
        }
        if (op == "-" && foldNegation(child.get())) {
          child->pos = child->op_pos = p;
          return child;
        }
      }
      auto e = std::make_unique<ParsedExpr>();
      e->type = ExprType::kUnary;
      e->op = op;
      e->pos = e->op_pos = p;
      e->end = child->end;
      e->children.push_back(std::move(child));
      return seal(std::move(e));
    }
    return parsePostfix();
  }

  // -<numeric literal> becomes a literal (so -9223372036854775808 is a BIGINT).
  static bool foldNegation(ParsedExpr* c) {
    const Value& v = c->value;
    switch (v.type()) {
      case LogicalType::kBigInt:
        if (v.bigintValue() == INT64_MIN) return false;
        c->value = Value::bigint(-v.bigintValue());
        return true;
      case LogicalType::kId:
        if (v.idValue() == static_cast<uint64_t>(INT64_MAX) + 1) {
          c->value = Value::bigint(INT64_MIN);
        } else {
          c->value = Value::dbl(-static_cast<double>(v.idValue()));
        }
        return true;
      case LogicalType::kDouble: c->value = Value::dbl(-v.doubleValue()); return true;
      default: return false;
    }
  }

  ParsedExprPtr parsePostfix() {
    ParsedExprPtr e = parsePrimary();
    while (isSymbol("::")) {
      SourcePos p = next().pos;
      auto cast = std::make_unique<ParsedExpr>();
      cast->type = ExprType::kCast;
      cast->pos = e->pos;
      cast->op_pos = p;
      cast->cast_type = parseTypeName();
      cast->end = prevEnd();
      cast->children.push_back(std::move(e));
      e = seal(std::move(cast));
    }
    return e;
  }

  LogicalType parseTypeName() {
    if (cur().kind != TokenKind::kIdentifier) fail("expected a type name (BIGINT, DOUBLE, VARCHAR, BOOLEAN, ID)");
    LogicalType t;
    if (!castTargetFromName(cur().text, &t)) {
      throw ParserError(cur().pos, "unknown type '" + std::string(cur().text) + "' (types: BIGINT, DOUBLE, VARCHAR, BOOLEAN, ID)");
    }
    next();
    return t;
  }

  ParsedExprPtr constant(const Token& t, Value v) {
    auto e = std::make_unique<ParsedExpr>();
    e->type = ExprType::kConstant;
    e->pos = e->op_pos = t.pos;
    e->end = t.end;
    e->value = std::move(v);
    return e;
  }

  ParsedExprPtr parsePrimary() {
    const Token& t = cur();
    switch (t.kind) {
      case TokenKind::kInteger: {
        next();
        uint64_t v = 0;
        auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
        if (ec == std::errc() && p == t.text.data() + t.text.size()) {
          return constant(t, v <= static_cast<uint64_t>(INT64_MAX) ? Value::bigint(static_cast<int64_t>(v)) : Value::id(v));
        }
        return constant(t, Value::dbl(std::strtod(std::string(t.text).c_str(), nullptr)));
      }
      case TokenKind::kFloat: {
        next();
        return constant(t, Value::dbl(std::strtod(std::string(t.text).c_str(), nullptr)));
      }
      case TokenKind::kString: {
        next();
        return constant(t, Value::varchar(t.value));
      }
      case TokenKind::kQuotedIdentifier: return parseColumnRef();
      case TokenKind::kSymbol:
        if (t.text == "(") {
          DepthGuard guard(this);
          next();
          if (isKeyword("SELECT") || isKeyword("WITH")) fail("subqueries in expressions are not supported in version 1 of the language");
          ParsedExprPtr inner = parseExpr();
          expectSymbol(")", "to close the parenthesis");
          inner->pos = t.pos;
          inner->end = prevEnd();
          return inner;
        }
        if (t.text == "*") fail("'*' is only allowed as a whole select item or in count(*)");
        fail("expected an expression");
      case TokenKind::kEnd: fail("expected an expression");
      case TokenKind::kIdentifier: break;
    }
    if (isKeyword("NULL")) return constant(next(), Value());
    if (isKeyword("TRUE")) return constant(next(), Value::boolean(true));
    if (isKeyword("FALSE")) return constant(next(), Value::boolean(false));
    if (isKeyword("CASE")) return parseCase();
    if (isKeyword("CAST")) return parseCast();
    if (isReservedWord(t.text)) fail("expected an expression");
    if (peekTok().kind == TokenKind::kSymbol && peekTok().text == "(") return parseFunction();
    return parseColumnRef();
  }

  ParsedExprPtr parseColumnRef() {
    auto e = std::make_unique<ParsedExpr>();
    e->type = ExprType::kColumn;
    e->pos = e->op_pos = cur().pos;
    e->names.push_back(parseName("a column name"));
    if (acceptSymbol(".")) {
      if (isSymbol("*")) {  // x.*: every column of one source, a select item of its own
        e->type = ExprType::kStar;
        next();
        e->end = prevEnd();
        return e;
      }
      e->names.push_back(parseName("a column name after '.'"));
    }
    e->end = prevEnd();
    return e;
  }

  ParsedExprPtr parseFunction() {
    DepthGuard guard(this);
    auto e = std::make_unique<ParsedExpr>();
    e->type = ExprType::kFunction;
    e->pos = e->op_pos = cur().pos;
    e->op = lower(next().text);
    expectSymbol("(", "after the function name");
    if (acceptSymbol("*")) {
      e->star_arg = true;
    } else if (!isSymbol(")")) {
      if (acceptKeyword("DISTINCT")) e->distinct = true;
      do e->children.push_back(parseExpr());
      while (acceptSymbol(","));
    }
    expectSymbol(")", "to close the argument list");
    // OVER is not reserved: `f(x) over` stays an alias unless a '(' follows.
    if (isKeyword("OVER") && peekTok().kind == TokenKind::kSymbol && peekTok().text == "(") e->window = parseWindowSpec();
    e->end = prevEnd();
    return seal(std::move(e));
  }

  std::unique_ptr<WindowSpec> parseWindowSpec() {
    auto w = std::make_unique<WindowSpec>();
    w->pos = next().pos;
    expectSymbol("(", "after OVER");
    if (acceptKeyword("PARTITION")) {
      expectKeyword("BY", "after PARTITION");
      do w->partition_by.push_back(parseExpr());
      while (acceptSymbol(","));
    }
    if (acceptKeyword("ORDER")) {
      expectKeyword("BY", "after ORDER");
      do w->order_by.push_back(parseOrderItem());
      while (acceptSymbol(","));
    }
    if (isKeyword("ROWS") || isKeyword("RANGE")) {
      w->has_frame = true;
      w->frame.unit = isKeyword("ROWS") ? FrameUnit::kRows : FrameUnit::kRange;
      next();
      if (acceptKeyword("BETWEEN")) {
        w->frame.start = parseFrameBound();
        expectKeyword("AND", "between the frame's bounds");
        w->frame.end = parseFrameBound();
      } else {
        // The short form names the start; the frame ends at the current row.
        w->frame.start = parseFrameBound();
        w->frame.end = FrameBound{FrameBoundKind::kCurrentRow, 0, w->frame.start.pos};
      }
      checkFrame(w->frame);
    }
    expectSymbol(")", "to close OVER (...)");
    return w;
  }

  FrameBound parseFrameBound() {
    FrameBound b;
    b.pos = cur().pos;
    if (acceptKeyword("UNBOUNDED")) {
      if (acceptKeyword("PRECEDING")) {
        b.kind = FrameBoundKind::kUnboundedPreceding;
      } else if (acceptKeyword("FOLLOWING")) {
        b.kind = FrameBoundKind::kUnboundedFollowing;
      } else {
        fail("expected PRECEDING or FOLLOWING after UNBOUNDED");
      }
      return b;
    }
    if (acceptKeyword("CURRENT")) {
      expectKeyword("ROW", "after CURRENT");
      b.kind = FrameBoundKind::kCurrentRow;
      return b;
    }
    if (cur().kind != TokenKind::kInteger && cur().kind != TokenKind::kFloat) {
      fail("expected UNBOUNDED, CURRENT ROW or a non-negative number for the frame bound");
    }
    b.offset = std::strtod(std::string(next().text).c_str(), nullptr);
    if (acceptKeyword("PRECEDING")) {
      b.kind = FrameBoundKind::kPreceding;
    } else if (acceptKeyword("FOLLOWING")) {
      b.kind = FrameBoundKind::kFollowing;
    } else {
      fail("expected PRECEDING or FOLLOWING after the frame offset");
    }
    return b;
  }

  // Frames whose end could lie before their start by construction, as SQL refuses them.
  static void checkFrame(const WindowFrame& f) {
    using K = FrameBoundKind;
    if (f.start.kind == K::kUnboundedFollowing) throw ParserError(f.start.pos, "a frame cannot start at UNBOUNDED FOLLOWING");
    if (f.end.kind == K::kUnboundedPreceding) throw ParserError(f.end.pos, "a frame cannot end at UNBOUNDED PRECEDING");
    if (f.start.kind == K::kCurrentRow && f.end.kind == K::kPreceding) {
      throw ParserError(f.end.pos, "a frame starting at the current row cannot end at a preceding row");
    }
    if (f.start.kind == K::kFollowing && (f.end.kind == K::kPreceding || f.end.kind == K::kCurrentRow)) {
      throw ParserError(f.end.pos, "a frame starting at a following row cannot end at the current row or a preceding row");
    }
    if (f.unit == FrameUnit::kRows) {
      for (const FrameBound* b : {&f.start, &f.end}) {
        if ((b->kind == K::kPreceding || b->kind == K::kFollowing) && (b->offset != std::floor(b->offset) || b->offset > 1e15)) {
          throw ParserError(b->pos, "a ROWS frame offset must be a whole number of rows");
        }
      }
    }
  }

  ParsedExprPtr parseCase() {
    DepthGuard guard(this);
    auto e = std::make_unique<ParsedExpr>();
    e->type = ExprType::kCase;
    e->pos = e->op_pos = next().pos;
    if (isKeyword("END") || isKeyword("ELSE")) fail("expected WHEN in CASE");
    if (!isKeyword("WHEN")) {
      e->has_operand = true;
      e->children.push_back(parseExpr());
    }
    if (!isKeyword("WHEN")) fail("expected WHEN in CASE");
    while (acceptKeyword("WHEN")) {
      e->children.push_back(parseExpr());
      expectKeyword("THEN", "after the WHEN condition");
      e->children.push_back(parseExpr());
    }
    if (acceptKeyword("ELSE")) {
      e->has_else = true;
      e->children.push_back(parseExpr());
    }
    expectKeyword("END", "to close CASE");
    e->end = prevEnd();
    return seal(std::move(e));
  }

  ParsedExprPtr parseCast() {
    DepthGuard guard(this);
    auto e = std::make_unique<ParsedExpr>();
    e->type = ExprType::kCast;
    e->pos = e->op_pos = next().pos;
    expectSymbol("(", "after CAST");
    e->children.push_back(parseExpr());
    expectKeyword("AS", "in CAST(... AS type)");
    e->cast_type = parseTypeName();
    expectSymbol(")", "to close CAST");
    e->end = prevEnd();
    return seal(std::move(e));
  }

  std::string_view sql_;
  std::vector<Token> tokens_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

bool isReservedWord(std::string_view word) {
  std::string u = upper(word);
  return std::find(std::begin(kReserved), std::end(kReserved), std::string_view(u)) != std::end(kReserved);
}

Statement parse(std::string_view sql, size_t max_bytes) {
  if (sql.size() > max_bytes) {
    throw ParserError(SourcePos{}, "query text of " + std::to_string(sql.size()) + " bytes is longer than the limit of " +
                                       std::to_string(max_bytes) + " bytes");
  }
  Parser p(sql, tokenize(sql));
  return p.parseStatement();
}

}  // namespace argus::query
