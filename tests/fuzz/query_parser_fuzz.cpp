// Fuzzes the query language front end: query::parse (lexer and parser), then bindSelect and
// planSelect on what parses (no store needed: they read only the catalog).
//
// Input: the query text. Invariants: parse either succeeds or throws ParserError (nothing
// else, no crash, bounded stack on any nesting); on success the canonical text
// (toString, every operator parenthesized) parses again to the same canonical text, unless
// the added parentheses take it past the nesting limit; binding throws only BinderError or
// succeeds, and a bound query plans without throwing.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "query/binder/binder.h"
#include "query/parser/parser.h"
#include "query/planner/planner.h"
#include "tests/fuzz/fuzz_util.h"

using namespace argus::query;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view sql(reinterpret_cast<const char*>(data), size);
  Statement statement;
  try {
    statement = parse(sql, 64 * 1024);
  } catch (const ParserError& e) {
    FUZZ_CHECK(std::string_view(e.what()).starts_with("parser error"));
    return 0;
  }
  FUZZ_CHECK(statement.select != nullptr);
  std::string canonical = toString(*statement.select);
  try {
    Statement again = parse(canonical, 1 << 20);
    FUZZ_CHECK(toString(*again.select) == canonical);
  } catch (const ParserError& e) {
    FUZZ_CHECK(std::string_view(e.what()).find("nested too deeply") != std::string_view::npos);
  }
  try {
    std::unique_ptr<BoundSelect> bound = bindSelect(*statement.select, sql);
    LogicalOperatorPtr plan = planSelect(*bound, QueryOptions{});
    FUZZ_CHECK(plan != nullptr);
  } catch (const BinderError&) {
  }
  return 0;
}
