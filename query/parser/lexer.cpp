#include "query/parser/lexer.h"

#include <cctype>

namespace argus::query {

namespace {

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 0x80; }
bool isIdentChar(char c) { return isIdentStart(c) || std::isdigit(static_cast<unsigned char>(c)); }
bool isDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

class Lexer {
 public:
  explicit Lexer(std::string_view sql) : sql_(sql) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    for (;;) {
      skipSpaceAndComments();
      Token t;
      t.pos = here();
      if (i_ >= sql_.size()) {
        t.end = static_cast<uint32_t>(i_);
        out.push_back(std::move(t));
        return out;
      }
      lexOne(&t);
      t.end = static_cast<uint32_t>(i_);
      out.push_back(std::move(t));
    }
  }

 private:
  SourcePos here() const { return SourcePos{line_, static_cast<uint32_t>(i_ - line_start_ + 1), static_cast<uint32_t>(i_)}; }

  void advance() {
    if (sql_[i_] == '\n') {
      ++line_;
      line_start_ = i_ + 1;
    }
    ++i_;
  }

  char peek(size_t ahead = 0) const { return i_ + ahead < sql_.size() ? sql_[i_ + ahead] : '\0'; }

  void skipSpaceAndComments() {
    while (i_ < sql_.size()) {
      char c = sql_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        advance();
      } else if (c == '-' && peek(1) == '-') {
        while (i_ < sql_.size() && sql_[i_] != '\n') advance();
      } else if (c == '/' && peek(1) == '*') {
        SourcePos start = here();
        advance();
        advance();
        while (i_ < sql_.size() && !(sql_[i_] == '*' && peek(1) == '/')) advance();
        if (i_ >= sql_.size()) throw ParserError(start, "unterminated /* comment");
        advance();
        advance();
      } else {
        return;
      }
    }
  }

  void lexOne(Token* t) {
    size_t start = i_;
    char c = sql_[i_];
    if (isIdentStart(c)) {
      while (i_ < sql_.size() && isIdentChar(sql_[i_])) advance();
      t->kind = TokenKind::kIdentifier;
    } else if (isDigit(c) || (c == '.' && isDigit(peek(1)))) {
      lexNumber(t);
    } else if (c == '\'') {
      lexQuoted(t, '\'', TokenKind::kString, "string literal");
    } else if (c == '"') {
      lexQuoted(t, '"', TokenKind::kQuotedIdentifier, "quoted identifier");
      if (t->value.empty()) throw ParserError(t->pos, "empty quoted identifier \"\"");
    } else {
      static constexpr std::string_view kTwo[] = {"//", "==", "!=", "<>", "<=", ">=", "||", "::", "=>"};
      t->kind = TokenKind::kSymbol;
      for (std::string_view two : kTwo) {
        if (c == two[0] && peek(1) == two[1]) {
          advance();
          advance();
          t->text = sql_.substr(start, 2);
          return;
        }
      }
      static constexpr std::string_view kOne = "(),.;*+-/%=<>";
      if (kOne.find(c) == std::string_view::npos) {
        std::string shown = static_cast<unsigned char>(c) < 0x20 ? "\\x" + std::to_string(static_cast<int>(c)) : std::string(1, c);
        throw ParserError(t->pos, "unexpected character '" + shown + "'");
      }
      advance();
    }
    t->text = sql_.substr(start, i_ - start);
  }

  void lexNumber(Token* t) {
    bool is_float = false;
    while (isDigit(peek())) advance();
    if (peek() == '.' && peek(1) != '.') {
      is_float = true;
      advance();
      while (isDigit(peek())) advance();
    }
    if (peek() == 'e' || peek() == 'E') {
      size_t save = i_;
      advance();
      if (peek() == '+' || peek() == '-') advance();
      if (!isDigit(peek())) {
        i_ = save;
        throw ParserError(here(), "malformed number: exponent without digits");
      }
      while (isDigit(peek())) advance();
      is_float = true;
    }
    if (isIdentStart(peek())) throw ParserError(here(), "malformed number: unexpected '" + std::string(1, peek()) + "' after digits");
    t->kind = is_float ? TokenKind::kFloat : TokenKind::kInteger;
  }

  void lexQuoted(Token* t, char quote, TokenKind kind, const char* what) {
    t->kind = kind;
    advance();
    for (;;) {
      if (i_ >= sql_.size()) throw ParserError(t->pos, std::string("unterminated ") + what);
      char c = sql_[i_];
      if (c == quote) {
        if (peek(1) == quote) {
          t->value.push_back(quote);
          advance();
          advance();
          continue;
        }
        advance();
        return;
      }
      t->value.push_back(c);
      advance();
    }
  }

  std::string_view sql_;
  size_t i_ = 0;
  uint32_t line_ = 1;
  size_t line_start_ = 0;
};

}  // namespace

std::vector<Token> tokenize(std::string_view sql) { return Lexer(sql).run(); }

}  // namespace argus::query
