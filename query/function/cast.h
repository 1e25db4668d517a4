// CAST between the logical types (docs/query/language.md, "Casts"). Casts that can fail on a
// value (VARCHAR to a number, DOUBLE to BIGINT out of range, a negative BIGINT to ID) throw
// ExecutionError naming the value and the cast's position; NULL casts to NULL.
#pragma once

#include <string>

#include "query/common/arena.h"
#include "query/common/errors.h"
#include "query/common/vector.h"

namespace argus::query {

// Whether CAST(x AS to) is defined for x of type from (it may still fail on a value).
bool canCast(LogicalType from, LogicalType to);
// Casts `count` rows of in (dense or constant: out is then constant) into out. Strings made
// go into arena. REQUIRES: canCast(in.type, to).
void castVector(const Vector& in, LogicalType to, size_t count, Vector& out, SourcePos pos, Arena& arena);
// One value; false with *why set when the value does not convert.
bool tryCastValue(const Value& in, LogicalType to, Value* out, std::string* why);

}  // namespace argus::query
