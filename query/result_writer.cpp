#include "query/result_writer.h"

#include <cinttypes>
#include <cstdio>

#include "query/http/json_writer.h"

namespace argus::query {

namespace {

void statsJson(JsonWriter& w, const QueryStats& s) {
  w.key("stats").beginObject();
  w.key("rows").value(s.rows);
  w.key("elapsed_ns").value(s.elapsed_ns);
  w.key("rows_scanned").value(s.rows_scanned);
  w.key("values_scanned").value(s.values_scanned);
  w.key("jobs_scanned").value(s.jobs_scanned);
  w.key("chunks_read").value(s.chunks_read);
  w.key("chunks_skipped").value(s.chunks_skipped);
  w.key("head_rows_read").value(s.head_rows_read);
  w.key("peak_memory_bytes").value(s.peak_memory_bytes);
  w.endObject();
}

}  // namespace

std::string histogramText(uint64_t count, double p50, double p90, double p99) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "count=%" PRIu64 " p50=%.0f p90=%.0f p99=%.0f", count, p50, p90, p99);
  return buf;
}

std::string cellText(const Vector& v, size_t row) {
  if (!v.isValid(row)) return "NULL";
  size_t r = v.constant ? 0 : row;
  switch (v.type) {
    case LogicalType::kNull: return "NULL";
    case LogicalType::kBoolean: return v.b8[r] ? "true" : "false";
    case LogicalType::kBigInt: return std::to_string(v.i64[r]);
    case LogicalType::kId: return std::to_string(static_cast<uint64_t>(v.i64[r]));
    case LogicalType::kDouble: return doubleText(v.f64[r]);
    case LogicalType::kVarchar: return std::string(v.str[r]);
    case LogicalType::kHistogram: {
      const model::DurationHistogram& h = *v.hist[r];
      return histogramText(h.count(), h.quantile(0.5), h.quantile(0.9), h.quantile(0.99));
    }
  }
  return "?";
}

void writeCsv(const QueryResult& r, std::string* out) {
  auto field = [&](const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) {
      out->append(s);
      return;
    }
    out->push_back('"');
    for (char c : s) {
      if (c == '"') out->push_back('"');
      out->push_back(c);
    }
    out->push_back('"');
  };
  for (size_t c = 0; c < r.names.size(); ++c) {
    if (c) out->push_back(',');
    field(r.names[c]);
  }
  out->append("\r\n");
  for (size_t row = 0; row < r.rows; ++row) {
    for (size_t c = 0; c < r.columns.size(); ++c) {
      if (c) out->push_back(',');
      if (r.columns[c].isValid(row)) field(cellText(r.columns[c], row));
    }
    out->append("\r\n");
  }
}

void writeJson(const QueryResult& r, std::string* out) {
  JsonWriter w(out);
  w.beginObject().key("columns").beginArray();
  for (size_t c = 0; c < r.names.size(); ++c) w.beginObject().key("name").value(r.names[c]).key("type").value(typeName(r.types[c])).endObject();
  w.endArray().key("rows").beginArray();
  for (size_t row = 0; row < r.rows; ++row) {
    w.beginArray();
    for (const Vector& v : r.columns) {
      if (!v.isValid(row)) {
        w.null();
        continue;
      }
      switch (v.type) {
        case LogicalType::kNull: w.null(); break;
        case LogicalType::kBoolean: w.value(v.b8[row] != 0); break;
        case LogicalType::kBigInt: w.value(v.i64[row]); break;
        case LogicalType::kId: w.value(std::to_string(static_cast<uint64_t>(v.i64[row]))); break;
        case LogicalType::kDouble: w.value(v.f64[row]); break;
        case LogicalType::kVarchar: w.value(v.str[row]); break;
        case LogicalType::kHistogram: {
          const model::DurationHistogram& h = *v.hist[row];
          w.beginObject().key("count").value(h.count());
          w.key("p50").value(h.quantile(0.5)).key("p90").value(h.quantile(0.9)).key("p99").value(h.quantile(0.99));
          w.endObject();
          break;
        }
      }
    }
    w.endArray();
  }
  w.endArray();
  statsJson(w, r.stats);
  w.endObject();
}

void writeJsonError(const QueryError& e, std::string* out) {
  JsonWriter w(out);
  w.beginObject().key("error").value(e.what()).key("kind").value(QueryError::kindName(e.kind()));
  if (e.pos().known()) w.key("line").value(e.pos().line).key("column").value(e.pos().column);
  w.endObject();
}

std::string caretText(std::string_view sql, SourcePos p) {
  if (!p.known() || p.offset > sql.size()) return "";
  size_t begin = p.offset == 0 ? std::string_view::npos : sql.rfind('\n', p.offset - 1);
  begin = begin == std::string_view::npos ? 0 : begin + 1;
  size_t end = sql.find('\n', p.offset);
  std::string line(sql.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
  for (char& c : line) {
    if (c == '\t') c = ' ';
  }
  size_t col = p.offset - begin;
  return "  " + line + "\n  " + std::string(col, ' ') + "^\n";
}

}  // namespace argus::query
