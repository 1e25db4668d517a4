// Splitting shell input into statements (docs/cli/argus.md, "argus shell"): a statement ends
// at a `;` outside string literals ('it''s'), quoted identifiers ("a;b") and comments
// (-- to the end of the line, /* ... */, not nested), the lexical rules of
// docs/query/language.md. Unlike the query lexer, it reads input that is not finished yet.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace argus::cli {

struct SplitInput {
  // The complete statements in order, without their `;` and the white space around them;
  // statements of nothing but white space and comments are left out.
  std::vector<std::string> statements;
  // What follows the last `;`: the start of the next statement, or "" when it holds
  // nothing but white space and finished comments.
  std::string rest;
};

SplitInput splitStatements(std::string_view text);

}  // namespace argus::cli
