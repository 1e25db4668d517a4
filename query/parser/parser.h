// Parser: query text -> Statement (docs/query/language.md, "Grammar"). Hand-written
// recursive descent over the lexer's tokens, one token of lookahead (two for a few
// keywords). Throws ParserError naming line:column and what was expected; refuses text
// longer than max_bytes and nesting deeper than kMaxParseDepth, so hostile input costs
// bounded stack and time.
#pragma once

#include <string_view>

#include "query/parser/ast.h"

namespace argus::query {

inline constexpr int kMaxParseDepth = 200;       // nested parentheses, subqueries, NOTs
inline constexpr uint32_t kMaxExprHeight = 500;  // levels of one expression tree
inline constexpr size_t kMaxJoinSources = 64;     // tables, subqueries and WITH names one FROM joins

Statement parse(std::string_view sql, size_t max_bytes = 1 << 20);

// True for words that cannot be used as unquoted names (SELECT, FROM, ...).
bool isReservedWord(std::string_view word);

}  // namespace argus::query
