// The lexer: token kinds, positions (line:column, byte offsets), literals with escapes,
// comments, and clean ParserErrors on what it cannot read.
#include <doctest/doctest.h>

#include "query/parser/lexer.h"

using namespace argus::query;

namespace {

std::vector<std::string> texts(const std::vector<Token>& tokens) {
  std::vector<std::string> out;
  for (const Token& t : tokens) out.emplace_back(t.kind == TokenKind::kString || t.kind == TokenKind::kQuotedIdentifier ? t.value : std::string(t.text));
  return out;
}

std::string lexError(std::string_view sql) {
  try {
    tokenize(sql);
  } catch (const ParserError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("tokens, kinds and the end token") {
  auto t = tokenize("SELECT a1, 'x', \"Q\", 42, 1.5, 2e3, .5 FROM t");
  REQUIRE(t.size() == 17);
  CHECK(texts(t) == std::vector<std::string>{"SELECT", "a1", ",", "x", ",", "Q", ",", "42", ",", "1.5", ",", "2e3", ",", ".5", "FROM", "t", ""});
  CHECK(t[0].kind == TokenKind::kIdentifier);
  CHECK(t[3].kind == TokenKind::kString);
  CHECK(t[5].kind == TokenKind::kQuotedIdentifier);
  CHECK(t[7].kind == TokenKind::kInteger);
  CHECK(t[9].kind == TokenKind::kFloat);
  CHECK(t[11].kind == TokenKind::kFloat);
  CHECK(t[13].kind == TokenKind::kFloat);
  CHECK(t.back().kind == TokenKind::kEnd);
}

TEST_CASE("two-character symbols are one token") {
  auto t = tokenize("a//b<=c>=d<>e!=f==g||h::i");
  std::vector<std::string> want = {"a", "//", "b", "<=", "c", ">=", "d", "<>", "e", "!=", "f", "==", "g", "||", "h", "::", "i", ""};
  CHECK(texts(t) == want);
}

TEST_CASE("positions are line:column from 1, offsets in bytes") {
  auto t = tokenize("SELECT\n  x,\n\ty -- note\n/* c\n */ z");
  REQUIRE(t.size() == 6);
  CHECK(t[1].pos.line == 2);
  CHECK(t[1].pos.column == 3);
  CHECK(t[1].pos.offset == 9);
  CHECK(t[3].pos.line == 3);
  CHECK(t[3].pos.column == 2);
  CHECK(t[4].text == "z");
  CHECK(t[4].pos.line == 5);
  CHECK(t[4].pos.column == 5);
  CHECK(t[4].end == t[4].pos.offset + 1);
}

TEST_CASE("quotes are escaped by doubling") {
  auto t = tokenize("'it''s' \"a\"\"b\" ''");
  CHECK(t[0].value == "it's");
  CHECK(t[1].value == "a\"b");
  CHECK(t[2].kind == TokenKind::kString);
  CHECK(t[2].value.empty());
}

TEST_CASE("what the lexer cannot read is a ParserError with a position") {
  CHECK(lexError("SELECT 'abc") == "parser error at 1:8: unterminated string literal");
  CHECK(lexError("SELECT \"abc") == "parser error at 1:8: unterminated quoted identifier");
  CHECK(lexError("SELECT \"\"") == "parser error at 1:8: empty quoted identifier \"\"");
  CHECK(lexError("x /* y") == "parser error at 1:3: unterminated /* comment");
  CHECK(lexError("a ? b") == "parser error at 1:3: unexpected character '?'");
  CHECK(lexError("1e+") == "parser error at 1:2: malformed number: exponent without digits");
  CHECK(lexError("12ab") == "parser error at 1:3: malformed number: unexpected 'a' after digits");
  CHECK(lexError(std::string("a \x01", 3)) == "parser error at 1:3: unexpected character '\\x1'");
}

TEST_CASE("non-ASCII bytes are identifier characters; a lone dot is a symbol") {
  auto t = tokenize("t.\xc3\xa9t\xc3\xa9");
  CHECK(texts(t) == std::vector<std::string>{"t", ".", "\xc3\xa9t\xc3\xa9", ""});
}
