#include "query/common/types.h"

#include <cctype>
#include <string>

namespace argus::query {

const char* typeName(LogicalType t) {
  switch (t) {
    case LogicalType::kNull: return "NULL";
    case LogicalType::kBoolean: return "BOOLEAN";
    case LogicalType::kBigInt: return "BIGINT";
    case LogicalType::kDouble: return "DOUBLE";
    case LogicalType::kVarchar: return "VARCHAR";
    case LogicalType::kId: return "ID";
    case LogicalType::kHistogram: return "HISTOGRAM";
  }
  return "UNKNOWN";
}

bool castTargetFromName(std::string_view name, LogicalType* out) {
  std::string n;
  for (char c : name) n.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  struct Alias {
    const char* name;
    LogicalType type;
  };
  static constexpr Alias kAliases[] = {
      {"BIGINT", LogicalType::kBigInt},   {"INT", LogicalType::kBigInt},      {"INTEGER", LogicalType::kBigInt},
      {"INT64", LogicalType::kBigInt},    {"DOUBLE", LogicalType::kDouble},   {"FLOAT", LogicalType::kDouble},
      {"REAL", LogicalType::kDouble},     {"VARCHAR", LogicalType::kVarchar}, {"TEXT", LogicalType::kVarchar},
      {"STRING", LogicalType::kVarchar},  {"BOOLEAN", LogicalType::kBoolean}, {"BOOL", LogicalType::kBoolean},
      {"ID", LogicalType::kId},
  };
  for (const Alias& a : kAliases) {
    if (n == a.name) {
      *out = a.type;
      return true;
    }
  }
  return false;
}

bool isNumeric(LogicalType t) { return t == LogicalType::kBigInt || t == LogicalType::kDouble; }

}  // namespace argus::query
