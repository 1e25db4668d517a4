// matchArguments on its own: positional and named arguments to parameters, defaults, the
// implicit conversions, and each error with its position; plus the parser's shape of a
// table function call.
#include <doctest/doctest.h>

#include "query/function/table_function.h"
#include "query/parser/parser.h"

using namespace argus::query;
using L = LogicalType;

namespace {

class Probe final : public TableFunction {
 public:
  Probe()
      : TableFunction("probe", "test", {{"a", L::kVarchar, true, {}, ""}, {"ratio", L::kDouble, false, Value::dbl(0.5), ""},
                                       {"sig", L::kId, false, Value::null(L::kId), ""}}) {}
  TableFunctionBinding bind(const TableFunctionArguments&) const override { return {}; }
  PhysicalOperatorPtr execute(const TableFunctionInput&) const override { return nullptr; }
};

SourcePos at(uint32_t column) { return SourcePos{1, column, column - 1}; }
TableFunctionArgument positional(Value v, uint32_t column) { return {"", std::move(v), at(column)}; }
TableFunctionArgument named(std::string n, Value v, uint32_t column) { return {std::move(n), std::move(v), at(column)}; }

std::string matchError(const std::vector<TableFunctionArgument>& given) {
  try {
    matchArguments(Probe(), given, at(1));
  } catch (const BinderError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("signature text shows types and defaults") {
  CHECK(Probe().signature() == "probe(a VARCHAR, ratio DOUBLE = 0.5, sig ID = NULL)");
}

TEST_CASE("positional, named and default arguments land on their parameters") {
  Probe f;
  auto m = matchArguments(f, {positional(Value::varchar("x"), 7), named("sig", Value::bigint(9), 12)}, at(1));
  REQUIRE(m.values.size() == 3);
  CHECK(m[0] == Value::varchar("x"));
  CHECK(m[1] == Value::dbl(0.5));  // default
  CHECK(m.positions[1].column == 1);  // a default points at the call
  CHECK(m[2] == Value::id(9));        // non-negative BIGINT -> ID
  CHECK(m.positions[2].column == 12);

  auto n = matchArguments(f, {named("ratio", Value::bigint(2), 3), named("a", Value::null(), 5)}, at(1));
  CHECK(n[1] == Value::dbl(2));  // BIGINT widens to DOUBLE
  CHECK(n[0].isNull());
  CHECK(n[0].type() == L::kVarchar);  // NULL takes the parameter's type
  CHECK(n[2].isNull());
  CHECK(n[2].type() == L::kId);
}

TEST_CASE("argument errors name the position and the signature") {
  CHECK(matchError({}) == "binder error at 1:1: probe(): missing required argument 'a' (probe(a VARCHAR, ratio DOUBLE = 0.5, sig ID = NULL))");
  CHECK(matchError({positional(Value::varchar("x"), 7), positional(Value::dbl(1), 9), positional(Value::null(), 11), positional(Value::null(), 13)}) ==
        "binder error at 1:13: probe(): too many arguments: it takes 3 (probe(a VARCHAR, ratio DOUBLE = 0.5, sig ID = NULL))");
  CHECK(matchError({positional(Value::varchar("x"), 7), named("a", Value::varchar("y"), 10)}).starts_with(
      "binder error at 1:10: probe(): parameter 'a' is given twice"));
  CHECK(matchError({named("rato", Value::dbl(1), 4)}).starts_with("binder error at 1:4: probe(): no parameter 'rato'; did you mean 'ratio'?"));
  CHECK(matchError({positional(Value::varchar("x"), 7), named("sig", Value::bigint(-1), 20)}).starts_with(
      "binder error at 1:20: probe(): argument 'sig' must be ID, got BIGINT -1"));
  CHECK(matchError({positional(Value::varchar("x"), 7), named("ratio", Value::varchar("0.5"), 20)}).starts_with(
      "binder error at 1:20: probe(): argument 'ratio' must be DOUBLE, got VARCHAR '0.5'"));
  CHECK(matchError({positional(Value::dbl(1), 7)}).starts_with("binder error at 1:7: probe(): argument 'a' must be VARCHAR, got DOUBLE 1"));
}

TEST_CASE("the parser reads a call in FROM with its arguments in order") {
  Statement s = parse("SELECT * FROM f('a', 1 + 2, last => -3, \"Mixed\" => x) AS t");
  const TableRef& ref = *s.select->from;
  REQUIRE(ref.kind == TableRef::Kind::kFunction);
  CHECK(ref.name == "f");
  CHECK(ref.alias == "t");
  REQUIRE(ref.args.size() == 4);
  CHECK(ref.args[0].name.empty());
  CHECK(toString(*ref.args[1].expr) == "(1 + 2)");
  CHECK(ref.args[2].name == "last");
  CHECK(ref.args[2].pos.column == 29);
  CHECK(ref.args[3].name == "Mixed");
  CHECK(toString(*s.select) == "SELECT * FROM f('a', (1 + 2), last => -3, \"Mixed\" => x) AS t");
  CHECK(parse("SELECT * FROM f()").select->from->args.empty());
}
