// The parser: precedence and associativity (through the canonical, fully parenthesized
// text), every statement form, literals, positions of errors, and the limits that keep
// hostile input cheap.
#include <doctest/doctest.h>

#include "query/parser/parser.h"

using namespace argus::query;

namespace {

std::string canon(std::string_view sql) { return toString(*parse(sql).select); }

std::string expr(std::string_view e) {
  std::string sql = "SELECT " + std::string(e);
  Statement s = parse(sql);
  REQUIRE(s.select->select_list.size() == 1);
  return toString(*s.select->select_list[0].expr);
}

std::string error(std::string_view sql) {
  try {
    parse(sql);
  } catch (const ParserError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("operator precedence, lowest to highest") {
  CHECK(expr("a OR b AND c") == "(a OR (b AND c))");
  CHECK(expr("NOT a AND b") == "((NOT a) AND b)");
  CHECK(expr("NOT a = b") == "(NOT (a = b))");
  CHECK(expr("a = b + c * d") == "(a = (b + (c * d)))");
  CHECK(expr("a || b + c") == "(a || (b + c))");
  CHECK(expr("a < b || c") == "(a < (b || c))");
  CHECK(expr("-a * b") == "((-a) * b)");
  CHECK(expr("a * -b") == "(a * (-b))");
  CHECK(expr("a // b % c / d") == "(((a // b) % c) / d)");
  CHECK(expr("a - b - c") == "((a - b) - c)");
  CHECK(expr("(a - b) * c") == "((a - b) * c)");
  CHECK(expr("-x::DOUBLE") == "(-CAST(x AS DOUBLE))");
  CHECK(expr("a + b IS NULL") == "((a + b) IS NULL)");
  CHECK(expr("a IS NOT NULL AND b") == "((a IS NOT NULL) AND b)");
  CHECK(expr("a BETWEEN b + 1 AND c OR d") == "((a BETWEEN (b + 1) AND c) OR d)");
  CHECK(expr("a NOT BETWEEN 1 AND 2") == "(a NOT BETWEEN 1 AND 2)");
  CHECK(expr("a NOT IN (1, b + 2)") == "(a NOT IN (1, (b + 2)))");
  CHECK(expr("a NOT LIKE 'x%' AND TRUE") == "((a NOT LIKE 'x%') AND TRUE)");
  CHECK(expr("a == b") == "(a = b)");
  CHECK(expr("a != b") == "(a <> b)");
}

TEST_CASE("literals") {
  CHECK(expr("42") == "42");
  CHECK(expr("-42") == "-42");
  CHECK(expr("- 42") == "-42");
  CHECK(expr("-9223372036854775808") == "-9223372036854775808");
  CHECK(expr("9223372036854775808") == "9223372036854775808");  // an ID literal
  CHECK(expr("99999999999999999999") == "1e+20");                 // past 64 bits: DOUBLE
  CHECK(expr("1.5") == "1.5");
  CHECK(expr("2.0") == "2.0");
  CHECK(expr("1e3") == "1000.0");
  CHECK(expr("'a''b'") == "'a''b'");
  CHECK(expr("NULL") == "NULL");
  CHECK(expr("true") == "TRUE");
  CHECK(expr("FALSE") == "FALSE");
  Statement s = parse("SELECT 9223372036854775808, 7, 2.5, 'x'");
  CHECK(s.select->select_list[0].expr->value.type() == LogicalType::kId);
  CHECK(s.select->select_list[1].expr->value.type() == LogicalType::kBigInt);
  CHECK(s.select->select_list[2].expr->value.type() == LogicalType::kDouble);
  CHECK(s.select->select_list[3].expr->value.type() == LogicalType::kVarchar);
}

TEST_CASE("functions, CASE and CAST") {
  CHECK(expr("count(*)") == "count(*)");
  CHECK(expr("COUNT(DISTINCT rank)") == "count(DISTINCT rank)");
  CHECK(expr("quantile(hist, 0.99)") == "quantile(hist, 0.99)");
  CHECK(expr("pi()") == "pi()");
  CHECK(expr("CASE WHEN a THEN 1 WHEN b THEN 2 ELSE 3 END") == "CASE WHEN a THEN 1 WHEN b THEN 2 ELSE 3 END");
  CHECK(expr("CASE x WHEN 1 THEN 'a' END") == "CASE x WHEN 1 THEN 'a' END");
  CHECK(expr("CAST(x AS int)") == "CAST(x AS BIGINT)");
  CHECK(expr("x::text::bool") == "CAST(CAST(x AS VARCHAR) AS BOOLEAN)");
  CHECK(expr("t.\"Weird Name\"") == "t.\"Weird Name\"");
}

TEST_CASE("statement forms") {
  CHECK(canon("select * from steps") == "SELECT * FROM steps");
  CHECK(canon("SELECT DISTINCT a AS x, b y FROM Steps AS s WHERE a > 1 GROUP BY a, b HAVING count(*) > 2 ORDER BY 1 DESC, y NULLS FIRST LIMIT 5 OFFSET 10") ==
        "SELECT DISTINCT a AS x, b AS y FROM steps AS s WHERE (a > 1) GROUP BY a, b HAVING (count(*) > 2) ORDER BY 1 DESC, y ASC NULLS FIRST LIMIT 5 OFFSET 10");
  CHECK(canon("SELECT a FROM (SELECT 1 AS a) t") == "SELECT a FROM (SELECT 1 AS a) AS t");
  CHECK(canon("WITH q AS (SELECT 1 AS one), r AS (SELECT one FROM q) SELECT one FROM r") ==
        "WITH q AS (SELECT 1 AS one), r AS (SELECT one FROM q) SELECT one FROM r");
  CHECK(canon("SELECT 1 OFFSET 3") == "SELECT 1 OFFSET 3");
  CHECK(canon("SELECT ALL 1;;") == "SELECT 1");
  CHECK(parse("EXPLAIN SELECT 1").explain);
  CHECK_FALSE(parse("EXPLAIN SELECT 1").analyze);
  CHECK(parse("EXPLAIN ANALYZE SELECT 1").analyze);
  CHECK(parse("explain analyze with t AS (SELECT 1) SELECT * FROM t").analyze);
  CHECK_FALSE(parse("SELECT 1").explain);
  Statement s = parse("SELECT a FROM t ORDER BY a DESC NULLS LAST, b");
  CHECK(s.select->order_by[0].desc);
  CHECK(s.select->order_by[0].nulls == OrderItem::Nulls::kLast);
  CHECK(s.select->order_by[1].nulls == OrderItem::Nulls::kDefault);
}

TEST_CASE("joins chain left-deep; every form has its canonical text") {
  CHECK(canon("SELECT * FROM a JOIN b ON a.x = b.x") == "SELECT * FROM a JOIN b ON (a.x = b.x)");
  CHECK(canon("SELECT * FROM a x INNER JOIN b AS y USING (k, j)") == "SELECT * FROM a AS x JOIN b AS y USING (k, j)");
  CHECK(canon("SELECT * FROM a LEFT OUTER JOIN b ON true LEFT JOIN c USING (k)") == "SELECT * FROM a LEFT JOIN b ON TRUE LEFT JOIN c USING (k)");
  CHECK(canon("SELECT * FROM a, b CROSS JOIN c") == "SELECT * FROM a CROSS JOIN b CROSS JOIN c");
  CHECK(canon("WITH w AS (SELECT 1 AS k) SELECT w.*, t.k FROM w JOIN (SELECT 1 AS k) t USING (k)") ==
        "WITH w AS (SELECT 1 AS k) SELECT w.*, t.k FROM w JOIN (SELECT 1 AS k) AS t USING (k)");
  // The canonical text parses back to the same tree (query_parser_fuzz's invariant).
  for (const char* sql : {"SELECT * FROM a, b JOIN c ON b.x = c.x LEFT JOIN d USING (y) WHERE a.z = 1",
                          "SELECT s.* FROM (SELECT 1 AS k) s CROSS JOIN t LEFT OUTER JOIN u ON s.k = u.k AND u.v > 2"}) {
    CHECK(canon(canon(sql)) == canon(sql));
  }
  Statement s = parse("SELECT 1 FROM a JOIN b ON true JOIN c ON true");
  CHECK(s.select->from->left->kind == TableRef::Kind::kJoin);
  CHECK(s.select->from->right->name == "c");
  // Join words are not aliases.
  s = parse("SELECT 1 FROM a left JOIN b ON true");
  CHECK(s.select->from->kind == TableRef::Kind::kJoin);
  CHECK(s.select->from->join_type == JoinType::kLeft);
  CHECK(s.select->from->left->alias.empty());
  CHECK(error("SELECT 1 FROM a JOIN b") == "parser error at 1:23: expected ON or USING after the joined table, found the end of the query");
  CHECK(error("SELECT 1 FROM a NATURAL JOIN b") == "parser error at 1:17: only [INNER] JOIN, LEFT [OUTER] JOIN and CROSS JOIN are supported, found keyword NATURAL");
  CHECK(error("SELECT 1 FROM a, b ON true") == "parser error at 1:20: a CROSS JOIN takes no ON or USING, found keyword ON");
  std::string many = "SELECT 1 FROM t0";
  for (int i = 1; i < 64; ++i) many += ", t" + std::to_string(i);
  CHECK(error(many) == "no error");
  CHECK(error(many + ", t64") == "parser error at 1:" + std::to_string(many.size() + 3) + ": a FROM clause joins at most 64 tables, found 't64'");
}

TEST_CASE("names are case-insensitive unless quoted") {
  Statement s = parse("SELECT RaNk, \"RaNk\" FROM StEpS");
  CHECK(s.select->select_list[0].expr->names[0] == "rank");
  CHECK(s.select->select_list[1].expr->names[0] == "RaNk");
  CHECK(s.select->from->name == "steps");
  CHECK(isReservedWord("select"));
  CHECK(isReservedWord("Order"));
  CHECK_FALSE(isReservedWord("rank"));
  CHECK_FALSE(isReservedWord("first"));
}

TEST_CASE("expression positions: start, operator and end") {
  std::string sql = "SELECT  max(iter_ns) / 1e6 AS ms FROM steps";
  Statement s = parse(sql);
  const ParsedExpr& e = *s.select->select_list[0].expr;
  CHECK(e.pos.column == 9);
  CHECK(e.op_pos.column == 22);
  CHECK(sql.substr(e.pos.offset, e.end - e.pos.offset) == "max(iter_ns) / 1e6");
  CHECK(s.select->select_list[0].alias == "ms");
  CHECK(s.select->select_list[0].alias_pos.column == 31);
}

TEST_CASE("syntax errors name line:column and what was expected") {
  CHECK(error("") == "parser error at 1:1: expected SELECT, WITH or EXPLAIN, found the end of the query");
  CHECK(error("SELECT") == "parser error at 1:7: expected an expression, found the end of the query");
  CHECK(error("SELECT a,") == "parser error at 1:10: expected an expression, found the end of the query");
  CHECK(error("SELECT a FROM t WHERE") == "parser error at 1:22: expected an expression, found the end of the query");
  CHECK(error("SELECT a\nFROM t\nWHERE a = = 1") == "parser error at 3:11: expected an expression, found '='");
  CHECK(error("SELECT a FROM t ORDER a") == "parser error at 1:23: expected BY after ORDER, found 'a'");
  CHECK(error("SELECT a FROM t LIMIT x") == "parser error at 1:23: expected a non-negative integer after LIMIT, found 'x'");
  CHECK(error("SELECT f(a") == "parser error at 1:11: expected ')' to close the argument list, found the end of the query");
  CHECK(error("SELECT CAST(a AS blob)") == "parser error at 1:18: unknown type 'blob' (types: BIGINT, DOUBLE, VARCHAR, BOOLEAN, ID)");
  CHECK(error("SELECT a FROM t) x") == "parser error at 1:16: unbalanced ')', found ')'");
  CHECK(error("SELECT a FROM (t)") == "parser error at 1:16: expected a query (SELECT ...) in parentheses after FROM, found 't'");
  CHECK(error("SELECT a AS") == "parser error at 1:12: expected a column alias after AS, found the end of the query");
  CHECK(error("SELECT 1 2") == "parser error at 1:10: expected the end of the query (one statement at a time), found '2'");
  CHECK(error("EXPLAIN") == "parser error at 1:8: expected SELECT, WITH or ANALYZE after EXPLAIN, found the end of the query");
  CHECK(error("EXPLAIN EXPLAIN SELECT 1") == "parser error at 1:9: expected SELECT, WITH or ANALYZE after EXPLAIN, found keyword EXPLAIN");
  CHECK(error("EXPLAIN ANALYZE") == "parser error at 1:16: expected SELECT or WITH after EXPLAIN ANALYZE, found the end of the query");
  CHECK(error("EXPLAIN ANALYZE FROM steps") == "parser error at 1:17: expected SELECT or WITH after EXPLAIN ANALYZE, found keyword FROM");
}

TEST_CASE("limits: text length, nesting depth, expression height") {
  CHECK(error(std::string(100, ' ') + "SELECT 1").find("no error") != std::string::npos);
  try {
    parse("SELECT 1", 4);
    FAIL("expected a length error");
  } catch (const ParserError& e) {
    CHECK(std::string(e.what()) == "parser error: query text of 8 bytes is longer than the limit of 4 bytes");
    CHECK_FALSE(e.pos().known());
  }
  std::string deep = "SELECT " + std::string(300, '(') + "1" + std::string(300, ')');
  CHECK(error(deep).find("query nested too deeply (more than 200 levels)") != std::string::npos);
  std::string nots = "SELECT ";
  for (int i = 0; i < 300; ++i) nots += "NOT ";
  CHECK(error(nots + "TRUE").find("nested too deeply") != std::string::npos);
  std::string chain = "SELECT 1";
  for (int i = 0; i < 1000; ++i) chain += " + 1";
  CHECK(error(chain).find("expression nested too deeply (more than 500 levels)") != std::string::npos);
  // Long but shallow: a big IN list parses.
  std::string in = "SELECT a IN (0";
  for (int i = 1; i < 5000; ++i) in += "," + std::to_string(i);
  CHECK(parse(in + ")").select->select_list[0].expr->children.size() == 5001);
  // Subqueries nest against the same depth limit.
  std::string sub = "SELECT 1";
  for (int i = 0; i < 250; ++i) sub = "SELECT * FROM (" + sub + ")";
  CHECK(error(sub).find("nested too deeply") != std::string::npos);
}

TEST_CASE("misspelled keywords are not taken for aliases") {
  CHECK(error("SELECT a form t") == "parser error at 1:10: expected ',', FROM or the end of the select list, found 'form'");
  CHECK(error("SELECT a FROM t wher a > 1") == "parser error at 1:17: expected JOIN, WHERE, GROUP BY, ORDER BY, LIMIT or the end of the query after the table, found 'wher'");
  CHECK(canon("SELECT a b FROM t c") == "SELECT a AS b FROM t AS c");
}

TEST_CASE("canonical text of a minus before a negative literal parses back (\"--\" would open a comment)") {
  // Found by query_parser_fuzz: "SELECT - -9223372036854775808" printed as (--9223372036854775808).
  const std::string once = canon("SELECT - -9223372036854775808, - -1, -(-x) FROM t");
  CHECK(once == "SELECT (- -9223372036854775808), 1, (-(-x)) FROM t");
  CHECK(canon(once) == once);
}
