// Lexer: query text -> tokens with their positions (docs/query/language.md, "Lexical rules").
// Hand-written; one pass; no allocation per token except for string literals with
// escapes. Throws ParserError on a character or literal it cannot read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "query/common/errors.h"

namespace argus::query {

enum class TokenKind : uint8_t {
  kEnd,
  kIdentifier,        // unquoted: letters, digits, _ (keywords too; the parser tells them apart)
  kQuotedIdentifier,  // "..." with "" for a quote
  kInteger,           // digits only
  kFloat,             // digits with a fraction or an exponent
  kString,            // '...' with '' for a quote
  kSymbol,            // ( ) , . ; * + - / // % = == != <> < <= > >= || ::
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;  // the token as written (symbols, identifiers, numbers)
  std::string value;      // string literal or quoted identifier, unescaped
  SourcePos pos;
  uint32_t end = 0;       // byte offset just past the token
};

// Splits sql into tokens, the last one kEnd. Comments (-- to end of line, /* ... */) and
// white space separate tokens and are dropped.
std::vector<Token> tokenize(std::string_view sql);

}  // namespace argus::query
