#include "query/common/errors.h"

namespace argus::query {

namespace {

std::string format(QueryError::Kind kind, SourcePos pos, const std::string& cause) {
  std::string out = QueryError::kindName(kind);
  out += " error";
  if (pos.known()) out += " at " + positionText(pos);
  out += ": ";
  out += cause;
  return out;
}

}  // namespace

QueryError::QueryError(Kind kind, SourcePos pos, const std::string& cause)
    : std::runtime_error(format(kind, pos, cause)), kind_(kind), pos_(pos), cause_(cause) {}

const char* QueryError::kindName(Kind kind) {
  switch (kind) {
    case Kind::kParser: return "parser";
    case Kind::kBinder: return "binder";
    case Kind::kExecution: return "execution";
  }
  return "query";
}

std::string positionText(SourcePos pos) { return std::to_string(pos.line) + ":" + std::to_string(pos.column); }

}  // namespace argus::query
