// The query engine's typed exceptions (STYLE.md: the engine throws, the shell and HTTP turn
// the exception into a message and a status code). Every message names the cause and, when
// the failure belongs to a place in the query text, the position as line:column (1-based).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace argus::query {

// A place in the query text. line 0 means "no position" (limits, deadlines).
struct SourcePos {
  uint32_t line = 0;
  uint32_t column = 0;
  uint32_t offset = 0;  // byte offset into the query text
  bool known() const { return line > 0; }
};

class QueryError : public std::runtime_error {
 public:
  enum class Kind : uint8_t { kParser, kBinder, kExecution };
  // what(): "<kind> error at L:C: <cause>", or "<kind> error: <cause>" without a position.
  QueryError(Kind kind, SourcePos pos, const std::string& cause);
  Kind kind() const { return kind_; }
  SourcePos pos() const { return pos_; }
  const std::string& cause() const { return cause_; }
  static const char* kindName(Kind kind);  // "parser", "binder", "execution"

 private:
  Kind kind_;
  SourcePos pos_;
  std::string cause_;
};

// Bad syntax or a query past the parser's limits.
class ParserError : public QueryError {
 public:
  ParserError(SourcePos pos, const std::string& cause) : QueryError(Kind::kParser, pos, cause) {}
};

// Unknown tables, columns or functions; type errors; misuse of aggregates.
class BinderError : public QueryError {
 public:
  BinderError(SourcePos pos, const std::string& cause) : QueryError(Kind::kBinder, pos, cause) {}
};

// Failures while running: overflow, bad casts, storage errors, deadline and memory cap.
class ExecutionError : public QueryError {
 public:
  explicit ExecutionError(const std::string& cause) : QueryError(Kind::kExecution, SourcePos{}, cause) {}
  ExecutionError(SourcePos pos, const std::string& cause) : QueryError(Kind::kExecution, pos, cause) {}
};

// "line:column", e.g. "1:15".
std::string positionText(SourcePos pos);

}  // namespace argus::query
