// Binder: parsed statement -> BoundSelect (docs/query/language.md, "Names and types").
// Resolves tables (the catalog, WITH queries, subqueries in FROM) and columns, picks function
// overloads with implicit casts (NULL to anything, BIGINT to DOUBLE, literals to the other
// side's type), checks clause rules (aggregates where they belong, GROUP BY coverage) and
// types. Throws BinderError naming the position and the cause, with a suggestion when a
// name is misspelled.
#pragma once

#include <memory>
#include <string_view>

#include "query/binder/bound_select.h"
#include "query/parser/ast.h"

namespace argus::query {

// sql: the text the statement was parsed from (output columns are named after it).
std::unique_ptr<BoundSelect> bindSelect(const SelectStatement& statement, std::string_view sql);

}  // namespace argus::query
