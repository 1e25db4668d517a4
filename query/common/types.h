// Logical types of the query language (docs/query/language.md, "Types").
#pragma once

#include <cstdint>
#include <string_view>

namespace argus::query {

// In-memory only: never written to disk or wire.
enum class LogicalType : uint8_t {
  kNull,       // the type of a bare NULL literal; resolved to another type by the binder
  kBoolean,
  kBigInt,     // int64
  kDouble,     // IEEE 754 binary64
  kVarchar,    // UTF-8 bytes
  kId,         // 64-bit unsigned identifier (kernel signatures, communicators, stack ids)
  kHistogram,  // model::DurationHistogram
};

// "BIGINT", "DOUBLE", ... as the language spells them.
const char* typeName(LogicalType t);
// Accepts the names and their synonyms (INT, INTEGER, INT64, FLOAT, REAL, TEXT, STRING, BOOL);
// case-insensitive. Returns false for anything else (HISTOGRAM and NULL are not cast targets).
bool castTargetFromName(std::string_view name, LogicalType* out);
bool isNumeric(LogicalType t);

}  // namespace argus::query
