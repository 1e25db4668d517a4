#include "cli/statement_splitter.h"

namespace argus::cli {

namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string trimmed(std::string_view s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && isSpace(s[b])) ++b;
  while (e > b && isSpace(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

}  // namespace

SplitInput splitStatements(std::string_view text) {
  SplitInput out;
  size_t start = 0;        // of the current statement
  bool has_token = false;  // the current statement holds more than space and comments
  bool open = false;       // inside an unfinished literal or comment at the end of text
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == '\'' || c == '"') {
      // A doubled quote inside is a quote: scanning on from it reopens the literal.
      has_token = true;
      size_t close = text.find(c, i + 1);
      if (close == std::string_view::npos) {
        open = true;
        break;
      }
      i = close + 1;
    } else if (c == '-' && i + 1 < text.size() && text[i + 1] == '-') {
      size_t eol = text.find('\n', i);
      i = eol == std::string_view::npos ? text.size() : eol + 1;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      size_t close = text.find("*/", i + 2);
      if (close == std::string_view::npos) {
        open = true;
        break;
      }
      i = close + 2;
    } else if (c == ';') {
      if (has_token) out.statements.push_back(trimmed(text.substr(start, i - start)));
      start = ++i;
      has_token = false;
    } else {
      has_token = has_token || !isSpace(c);
      ++i;
    }
  }
  if (has_token || open) out.rest = std::string(text.substr(start));
  return out;
}

}  // namespace argus::cli
