#include "query/http/http_router.h"

#include <algorithm>
#include <charconv>

#include "base/prometheus.h"
#include "query/engine.h"
#include "query/http/json_writer.h"
#include "query/http/query_request.h"
#include "query/result_writer.h"

namespace argus::query {

namespace {

constexpr size_t kDefaultScanLimit = 10'000;
constexpr size_t kMaxScanLimit = 1'000'000;
constexpr uint64_t kMaxQueryTimeoutMs = 300'000;          // a query runs at most 5 minutes
constexpr uint64_t kMaxQueryMemoryBytes = uint64_t{4} << 30;  // and holds at most 4 GiB

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percentDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out.push_back(' ');
    } else if (s[i] == '%' && i + 2 < s.size() && hexValue(s[i + 1]) >= 0 && hexValue(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hexValue(s[i + 1]) * 16 + hexValue(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

bool parseU64(std::string_view s, uint64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

std::vector<std::string_view> splitCommas(std::string_view s) {
  std::vector<std::string_view> parts;
  while (!s.empty()) {
    size_t comma = s.find(',');
    std::string_view part = s.substr(0, comma);
    if (!part.empty()) parts.push_back(part);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return parts;
}

// 64-bit hashes (kernel signatures, communicators, stacks, dictionary ids) use all 64 bits;
// JSON numbers lose precision past 2^53, so these travel as decimal strings of type "id".
bool isIdColumn(const storage::Column& column) {
  static constexpr std::string_view kIds[] = {"signature", "communicator", "stack_id", "name_id"};
  return column.type == storage::ColumnType::kUInt64 && std::find(std::begin(kIds), std::end(kIds), column.name) != std::end(kIds);
}

const char* typeName(const storage::Column& column) {
  if (isIdColumn(column)) return "id";
  switch (column.type) {
    case storage::ColumnType::kInt64: return "int64";
    case storage::ColumnType::kUInt64: return "uint64";
    case storage::ColumnType::kHistogram: return "histogram";
  }
  return "unknown";
}

void writeCell(JsonWriter& w, const storage::Column& column, size_t row) {
  switch (column.type) {
    case storage::ColumnType::kInt64:
      w.value(column.ints[row]);
      break;
    case storage::ColumnType::kUInt64:
      if (isIdColumn(column)) {
        w.value(std::to_string(static_cast<uint64_t>(column.ints[row])));
      } else {
        w.value(static_cast<uint64_t>(column.ints[row]));
      }
      break;
    case storage::ColumnType::kHistogram: {
      const model::DurationHistogram& h = column.hists[row];
      w.beginObject().key("count").value(h.count());
      w.key("p50").value(h.quantile(0.5)).key("p90").value(h.quantile(0.9)).key("p99").value(h.quantile(0.99));
      w.endObject();
      break;
    }
  }
}

}  // namespace

std::map<std::string, std::string> parseQueryString(std::string_view query) {
  std::map<std::string, std::string> params;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    size_t eq = pair.find('=');
    if (!pair.empty()) {
      std::string key = percentDecode(pair.substr(0, eq));
      std::string value = eq == std::string_view::npos ? std::string() : percentDecode(pair.substr(eq + 1));
      params[key] = value;
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return params;
}

HttpRouter::HttpRouter(storage::Store& store, MetricsWriter extra_metrics)
    : store_(store), extra_metrics_(std::move(extra_metrics)) {}

void HttpRouter::count(int status) {
  if (status < 400) {
    requests_2xx_++;
  } else if (status < 500) {
    requests_4xx_++;
  } else {
    requests_5xx_++;
  }
}

void HttpRouter::countRefusal(int status) { count(status); }

HttpResponse HttpRouter::handle(const HttpRequest& request) {
  std::string_view target = request.target;
  size_t question = target.find('?');
  std::string_view path = target.substr(0, question);
  std::string_view query = question == std::string_view::npos ? std::string_view() : target.substr(question + 1);

  HttpResponse response;
  if (std::optional<HttpResponse> refusal = refuseUnauthorized(request, path)) {
    count(refusal->status);
    return *refusal;
  }
  constexpr std::string_view kGrafana = "/api/v1/grafana";
  constexpr std::string_view kJobs = "/api/v1/jobs/", kFlightRecorder = "/flight-recorder";
  if (path.starts_with(kJobs) && path.ends_with(kFlightRecorder) && path.size() > kJobs.size() + kFlightRecorder.size()) {
    std::string job = percentDecode(path.substr(kJobs.size(), path.size() - kJobs.size() - kFlightRecorder.size()));
    if (request.method == "POST") {
      response = flightRecorder(job, parseQueryString(query));
    } else {
      response = jsonError(405, "method " + request.method + " not allowed on " + std::string(path) + " (POST to request a dump)");
    }
  } else if (path.starts_with(kGrafana) && (path.size() == kGrafana.size() || path[kGrafana.size()] == '/')) {
    response = grafana_.handle(request.method, path.substr(kGrafana.size()), request.body, request.client_gone);
  } else if (path == "/api/v1/query") {
    if (request.method == "POST") {
      std::string error;
      std::optional<QueryRequest> q = readQueryRequest(parseQueryString(query), request.body, &error);
      if (q) {
        response = this->query(q->params, q->sql, request.client_gone);
      } else {
        queries_++;
        query_errors_++;
        response = jsonError(400, error);
      }
    } else {
      response = jsonError(405, "method " + request.method + " not allowed on /api/v1/query (POST the query text or {\"q\": ...})");
    }
  } else if (request.method != "GET") {
    response = jsonError(405, "method " + request.method + " not allowed on " + std::string(path));
  } else if (path == "/healthz") {
    response.content_type = "text/plain";
    response.body = "ok\n";
  } else if (path == "/metrics") {
    response = metrics();
  } else if (path == "/api/v1/jobs") {
    response = jobs();
  } else if (path == "/api/v1/scan") {
    response = scan(parseQueryString(query));
  } else if (path == "/api/v1/kernels") {
    response = kernel(parseQueryString(query));
  } else {
    response = jsonError(404, "no such endpoint: " + std::string(path));
  }
  count(response.status);
  return response;
}

std::optional<HttpResponse> HttpRouter::refuseUnauthorized(const HttpRequest& request, std::string_view path) const {
  if (!tokens_ || !path.starts_with("/api/")) return std::nullopt;
  std::optional<HttpRole> role = tokens_->roleOf(request.authorization);
  if (!role) {
    HttpResponse r = jsonError(401, request.authorization.empty() ? "this argusd needs `Authorization: Bearer TOKEN` (--http-tokens)"
                                                                    : "unknown token");
    r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"argusd\"");
    return r;
  }
  // Control: what acts on running jobs (flight-recorder dumps); everything else only reads.
  bool control = request.method == "POST" && path.starts_with("/api/v1/jobs/");
  if (control && *role != HttpRole::kControl) return jsonError(403, "a read token may not " + request.method + " " + std::string(path) + " (needs a control token)");
  return std::nullopt;
}

HttpResponse HttpRouter::metrics() {
  HttpResponse r;
  r.content_type = "text/plain; version=0.0.4";
  std::string& out = r.body;
  auto count = [](uint64_t v) { return static_cast<double>(v); };
  prometheus::metric(&out, "argus_store_bytes", "gauge", "Bytes the store occupies on disk (SST and WAL).", count(store_.size().live_bytes));
  prometheus::metric(&out, "argus_store_head_bytes", "gauge", "Bytes of head entries not sealed yet (keys and values).",
                     count(store_.headBytes()));
  prometheus::metric(&out, "argus_store_jobs", "gauge", "Jobs in the store.", count(store_.listJobs().size()));
  const char* requests = "argus_http_requests_total";
  prometheus::header(&out, requests, "counter", "HTTP requests answered, by status class.");
  prometheus::sample(&out, requests, "code=\"2xx\"", count(requests_2xx_.load()));
  prometheus::sample(&out, requests, "code=\"4xx\"", count(requests_4xx_.load()));
  prometheus::sample(&out, requests, "code=\"5xx\"", count(requests_5xx_.load()));
  prometheus::metric(&out, "argus_http_scan_rows_total", "counter", "Rows returned by /api/v1/scan.", count(scan_rows_.load()));
  prometheus::metric(&out, "argus_http_queries_total", "counter", "Queries run by /api/v1/query.", count(queries_.load()));
  prometheus::metric(&out, "argus_http_query_errors_total", "counter", "Queries of /api/v1/query that failed.", count(query_errors_.load()));
  query_metrics_.write(&out);
  grafana_.writeMetrics(&out);
  if (extra_metrics_) extra_metrics_(&out);
  return r;
}

HttpResponse HttpRouter::jobs() {
  HttpResponse r;
  JsonWriter w(&r.body);
  w.beginObject().key("jobs").beginArray();
  for (const storage::JobInfo& job : store_.listJobs()) {
    w.beginObject();
    w.key("name").value(job.name).key("created_ns").value(job.created_ns);
    w.key("last_write_ns").value(job.last_write_ns).key("retention_ns").value(job.retention_ns);
    w.endObject();
  }
  w.endArray().endObject();
  return r;
}

HttpResponse HttpRouter::kernel(const std::map<std::string, std::string>& params) {
  auto job = params.find("job");
  auto signature = params.find("signature");
  uint64_t id = 0;
  if (job == params.end() || signature == params.end() || !parseU64(signature->second, &id)) {
    return jsonError(400, "kernels: parameters 'job' and 'signature' (a decimal uint64) are required");
  }
  Result<model::KernelDictEntry> entry = store_.kernelName(job->second, id);
  if (!entry.isOk()) return jsonError(entry.status().isNotFound() ? 404 : 500, entry.status().toString());
  HttpResponse r;
  const model::LaunchGeometry& g = entry->geometry;
  JsonWriter w(&r.body);
  w.beginObject().key("signature").value(std::to_string(id)).key("name").value(entry->name);
  w.key("grid").beginArray().value(g.grid_x).value(g.grid_y).value(g.grid_z).endArray();
  w.key("block").beginArray().value(g.block_x).value(g.block_y).value(g.block_z).endArray();
  w.endObject();
  return r;
}

HttpResponse HttpRouter::scan(const std::map<std::string, std::string>& params) {
  storage::ScanSpec spec;
  auto get = [&](const char* name) -> const std::string* {
    auto it = params.find(name);
    return it == params.end() ? nullptr : &it->second;
  };
  if (const std::string* job = get("job")) {
    spec.job = *job;
  } else {
    return jsonError(400, "scan: parameter 'job' is required");
  }
  if (const std::string* table = get("table"); table && !storage::tableFromName(*table, &spec.table)) {
    return jsonError(400, "scan: unknown table '" + *table + "'");
  }
  if (const std::string* columns = get("columns")) {
    for (std::string_view c : splitCommas(*columns)) spec.columns.emplace_back(c);
  }
  for (auto [name, field] : {std::pair{"from_step", &spec.from_step}, std::pair{"to_step", &spec.to_step}}) {
    if (const std::string* v = get(name); v && !parseU64(*v, field)) {
      return jsonError(400, std::string("scan: '") + name + "' must be a non-negative integer, got '" + *v + "'");
    }
  }
  if (const std::string* ranks = get("ranks")) {
    for (std::string_view part : splitCommas(*ranks)) {
      uint64_t rank;
      if (!parseU64(part, &rank) || rank > UINT32_MAX) {
        return jsonError(400, "scan: bad rank '" + std::string(part) + "' in 'ranks'");
      }
      spec.ranks.push_back(static_cast<uint32_t>(rank));
    }
  }
  uint64_t limit = kDefaultScanLimit;
  if (const std::string* v = get("limit"); v && (!parseU64(*v, &limit) || limit > kMaxScanLimit)) {
    return jsonError(400, "scan: 'limit' must be an integer up to " + std::to_string(kMaxScanLimit));
  }

  Result<std::unique_ptr<storage::ScanCursor>> cursor = store_.scan(spec);
  if (!cursor.isOk()) {
    const Status& s = cursor.status();
    int status = s.isNotFound() ? 404 : s.code() == Status::Code::kInvalidArgument ? 400 : 500;
    return jsonError(status, s.toString());
  }
  HttpResponse r;
  JsonWriter w(&r.body);
  w.beginObject();
  storage::ColumnBatch batch;
  bool has_rows = true;
  bool header_written = false;
  uint64_t rows = 0;
  bool truncated = false;
  while (has_rows) {
    Status s = (*cursor)->next(&batch, &has_rows);
    if (!s.isOk()) return jsonError(s.isCorruption() ? 500 : 400, s.toString());
    if (!header_written && (has_rows || batch.rows == 0)) {
      w.key("columns").beginArray();
      for (const storage::Column& c : batch.columns) {
        w.beginObject().key("name").value(c.name).key("type").value(typeName(c)).endObject();
      }
      w.endArray().key("rows").beginArray();
      header_written = true;
    }
    for (size_t row = 0; row < batch.rows; ++row) {
      if (rows == limit || r.body.size() >= max_scan_bytes_) {
        truncated = true;
        has_rows = false;
        break;
      }
      w.beginArray();
      for (const storage::Column& c : batch.columns) writeCell(w, c, row);
      w.endArray();
      ++rows;
    }
  }
  if (!header_written) w.key("columns").beginArray().endArray().key("rows").beginArray();
  w.endArray();
  const storage::ScanStats& stats = (*cursor)->stats();
  w.key("stats").beginObject();
  w.key("rows").value(rows).key("truncated").value(truncated);
  w.key("chunks_read").value(stats.chunks_read).key("chunks_skipped").value(stats.chunks_skipped);
  w.key("head_rows_read").value(stats.head_rows_read);
  w.endObject().endObject();
  scan_rows_ += rows;
  return r;
}

HttpResponse HttpRouter::flightRecorder(const std::string& job, const std::map<std::string, std::string>& params) {
  uint64_t from = 0, to = 0;
  auto from_it = params.find("from_step");
  auto to_it = params.find("to_step");
  if (from_it == params.end() || to_it == params.end() || !parseU64(from_it->second, &from) || !parseU64(to_it->second, &to)) {
    return jsonError(400, "flight-recorder: parameters 'from_step' and 'to_step' (non-negative integers) are required");
  }
  if (from > to) {
    return jsonError(400, "flight-recorder: 'from_step' " + std::to_string(from) + " is after 'to_step' " + std::to_string(to));
  }
  std::vector<uint32_t> ranks;
  if (auto it = params.find("ranks"); it != params.end()) {
    for (std::string_view part : splitCommas(it->second)) {
      uint64_t rank;
      if (!parseU64(part, &rank) || rank > UINT32_MAX) {
        return jsonError(400, "flight-recorder: bad rank '" + std::string(part) + "' in 'ranks'");
      }
      ranks.push_back(static_cast<uint32_t>(rank));
    }
    if (ranks.empty()) return jsonError(400, "flight-recorder: 'ranks' is empty (leave it out for every rank)");
  }
  if (!dumper_) return jsonError(503, "flight-recorder: this server has no ingest sessions to ask");
  size_t asked = dumper_(job, ranks, from, to);
  if (asked == 0) {
    bool known = store_.findJob(job).isOk();
    return jsonError(404, "flight-recorder: " + (known ? "job '" + job + "' has no live capture session" +
                                                             (ranks.empty() ? std::string() : " of the ranks asked")
                                                       : "unknown job '" + job + "'"));
  }
  HttpResponse r;
  r.status = 202;
  JsonWriter(&r.body).beginObject().key("sessions").value(static_cast<uint64_t>(asked)).endObject();
  return r;
}

HttpResponse HttpRouter::query(const std::map<std::string, std::string>& params, const std::string& sql,
                               const std::atomic<bool>* cancel) {
  queries_++;
  QueryOptions options;
  options.cancel = cancel;
  auto get = [&](const char* name) -> const std::string* {
    auto it = params.find(name);
    return it == params.end() ? nullptr : &it->second;
  };
  uint64_t v = 0;
  if (const std::string* t = get("timeout_ms")) {
    if (!parseU64(*t, &v) || v > kMaxQueryTimeoutMs) {
      query_errors_++;
      return jsonError(400, "query: 'timeout_ms' must be an integer up to " + std::to_string(kMaxQueryTimeoutMs));
    }
    options.deadline = std::chrono::milliseconds(v);
  }
  if (const std::string* m = get("memory_limit")) {
    if (!parseU64(*m, &v) || v > kMaxQueryMemoryBytes) {
      query_errors_++;
      return jsonError(400, "query: 'memory_limit' must be a byte count up to " + std::to_string(kMaxQueryMemoryBytes));
    }
    options.memory_limit_bytes = v;
  }
  if (const std::string* p = get("pushdown")) options.pushdown = *p != "off";
  const std::string* format = get("format");
  if (format && *format != "json" && *format != "csv") {
    query_errors_++;
    return jsonError(400, "query: 'format' must be json or csv");
  }
  HttpResponse r;
  try {
    QueryResult result = query_metrics_.run(store_, sql, options);
    if (format && *format == "csv") {
      r.content_type = "text/csv";
      writeCsv(result, &r.body);
    } else {
      writeJson(result, &r.body);
    }
  } catch (const QueryError& e) {
    query_errors_++;
    // Parser and binder errors are the query's fault; execution errors (overflow, deadline,
    // memory cap, a corrupt chunk) are 422 unless the store itself failed.
    r.status = e.kind() == QueryError::Kind::kExecution ? 422 : 400;
    r.body.clear();
    writeJsonError(e, &r.body);
  }
  return r;
}

}  // namespace argus::query
