// Query results in Grafana's shapes (docs/http/grafana.md): a table
// {"type":"table","columns":[{"text","type"}],"rows":[[...]]}, annotations and variable
// values. Time columns: a BIGINT column named `time` or `time_end` holds Unix ns and is
// written as Unix ms with type "time", so Grafana can plot and annotate with it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "query/engine.h"
#include "query/http/json_writer.h"

namespace argus::query {

// Appends one table object to an open JSON array.
void writeGrafanaTable(const QueryResult& r, JsonWriter& w);

// One annotation read from a result row; see annotationsFromResult.
struct GrafanaAnnotation {
  int64_t time_ns = 0;
  std::optional<int64_t> time_end_ns;  // a region when set
  std::string title;
  std::string text;
  std::vector<std::string> tags;
};

// Reads rows with columns `time` (BIGINT Unix ns, required), `text` (required, any type),
// optional `title`, `time_end` (BIGINT ns: a region) and `tags` (VARCHAR, comma-separated).
// Rows whose time is NULL or outside [from_ns, to_ns] are skipped. Returns an error message
// in *error when a required column is missing or of the wrong type.
std::vector<GrafanaAnnotation> annotationsFromResult(const QueryResult& r, int64_t from_ns, int64_t to_ns, std::string* error);

// Text of a cell for variable values and annotation text (NULL: "").
std::string grafanaCellText(const QueryResult& r, size_t row, size_t column);

}  // namespace argus::query
