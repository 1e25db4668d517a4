// Writing a QueryResult for people and programs (docs/query/language.md, "Output"): cell
// text for tables, CSV (RFC 4180, header row, NULL as an empty field) and JSON
// {"columns": [{"name", "type"}], "rows": [[...]], "stats": {...}}. In JSON, IDs travel as
// decimal strings (64-bit hashes do not fit a JSON number), histograms as
// {"count", "p50", "p90", "p99"}, NaN and infinities as null.
#pragma once

#include <string>

#include "query/common/errors.h"
#include "query/engine.h"

namespace argus::query {

// Text of one cell: NULL, true/false, integers, doubles in their shortest round-trip form,
// IDs unsigned, histograms as "count=N p50=.. p90=.. p99=..".
std::string cellText(const Vector& v, size_t row);

// "count=N p50=.. p90=.. p99=.." (ns, rounded): how a histogram cell reads in tables and CSV.
std::string histogramText(uint64_t count, double p50, double p90, double p99);

void writeCsv(const QueryResult& r, std::string* out);
void writeJson(const QueryResult& r, std::string* out);
// {"error": what(), "kind": "parser"|"binder"|"execution", "line": L, "column": C}.
void writeJsonError(const QueryError& e, std::string* out);
// The query line the error points at with a caret under the column, or "" without a position.
std::string caretText(std::string_view sql, SourcePos pos);

}  // namespace argus::query
