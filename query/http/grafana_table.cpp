#include "query/http/grafana_table.h"

#include "query/http/grafana_time.h"
#include "query/result_writer.h"

namespace argus::query {

namespace {

bool isTimeColumn(const QueryResult& r, size_t c) {
  return r.types[c] == LogicalType::kBigInt && (r.names[c] == "time" || r.names[c] == "time_end");
}

const char* grafanaType(const QueryResult& r, size_t c) {
  if (isTimeColumn(r, c)) return "time";
  switch (r.types[c]) {
    case LogicalType::kBigInt:
    case LogicalType::kDouble:
      return "number";
    case LogicalType::kBoolean:
      return "boolean";
    case LogicalType::kNull:
    case LogicalType::kVarchar:
    case LogicalType::kId:  // decimal text: 64-bit hashes do not fit a JSON number
    case LogicalType::kHistogram:
      return "string";
  }
  return "string";
}

int findColumn(const QueryResult& r, std::string_view name) {
  for (size_t c = 0; c < r.names.size(); ++c) {
    if (r.names[c] == name) return static_cast<int>(c);
  }
  return -1;
}

}  // namespace

std::string grafanaCellText(const QueryResult& r, size_t row, size_t column) {
  if (!r.columns[column].isValid(row)) return "";
  return cellText(r.columns[column], row);
}

void writeGrafanaTable(const QueryResult& r, JsonWriter& w) {
  w.beginObject().key("type").value("table").key("columns").beginArray();
  for (size_t c = 0; c < r.names.size(); ++c)
    w.beginObject().key("text").value(r.names[c]).key("type").value(grafanaType(r, c)).endObject();
  w.endArray().key("rows").beginArray();
  for (size_t row = 0; row < r.rows; ++row) {
    w.beginArray();
    for (size_t c = 0; c < r.columns.size(); ++c) {
      const Vector& v = r.columns[c];
      if (!v.isValid(row)) {
        w.null();
      } else if (isTimeColumn(r, c)) {
        w.value(nsToMs(v.i64[row]));
      } else if (v.type == LogicalType::kBigInt) {
        w.value(v.i64[row]);
      } else if (v.type == LogicalType::kDouble) {
        w.value(v.f64[row]);
      } else if (v.type == LogicalType::kBoolean) {
        w.value(v.b8[row] != 0);
      } else {
        w.value(cellText(v, row));
      }
    }
    w.endArray();
  }
  w.endArray().endObject();
}

std::vector<GrafanaAnnotation> annotationsFromResult(const QueryResult& r, int64_t from_ns, int64_t to_ns, std::string* error) {
  const int time = findColumn(r, "time"), text = findColumn(r, "text"), title = findColumn(r, "title");
  const int time_end = findColumn(r, "time_end"), tags = findColumn(r, "tags");
  if (time < 0 || text < 0) {
    *error = "an annotation query needs columns named `time` (Unix ns) and `text`";
    return {};
  }
  if (!isTimeColumn(r, static_cast<size_t>(time)) || (time_end >= 0 && !isTimeColumn(r, static_cast<size_t>(time_end)))) {
    *error = "annotation columns `time` and `time_end` must be BIGINT Unix nanoseconds";
    return {};
  }
  std::vector<GrafanaAnnotation> out;
  for (size_t row = 0; row < r.rows; ++row) {
    const Vector& t = r.columns[static_cast<size_t>(time)];
    if (!t.isValid(row) || t.i64[row] < from_ns || t.i64[row] > to_ns) continue;
    GrafanaAnnotation a;
    a.time_ns = t.i64[row];
    a.text = grafanaCellText(r, row, static_cast<size_t>(text));
    if (title >= 0) a.title = grafanaCellText(r, row, static_cast<size_t>(title));
    if (time_end >= 0 && r.columns[static_cast<size_t>(time_end)].isValid(row))
      a.time_end_ns = r.columns[static_cast<size_t>(time_end)].i64[row];
    if (tags >= 0) {
      const std::string list = grafanaCellText(r, row, static_cast<size_t>(tags));
      std::string_view rest = list;
      while (!rest.empty()) {
        size_t comma = rest.find(',');
        std::string_view tag = rest.substr(0, comma);
        while (!tag.empty() && tag.front() == ' ') tag.remove_prefix(1);
        while (!tag.empty() && tag.back() == ' ') tag.remove_suffix(1);
        if (!tag.empty()) a.tags.emplace_back(tag);
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
      }
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace argus::query
