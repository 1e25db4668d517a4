#include "query/http/grafana_api.h"

#include <algorithm>
#include <cctype>

#include "base/prometheus.h"
#include "model/step_record.h"
#include "query/common/errors.h"
#include "query/http/grafana_request.h"
#include "query/http/grafana_table.h"
#include "query/http/grafana_time.h"
#include "query/http/json_writer.h"
#include "query/http/step_series.h"

namespace argus::query {

namespace {

constexpr size_t kMaxTargets = 100;
constexpr uint64_t kMaxDataPoints = 100'000;  // per series
constexpr uint64_t kDefaultDataPoints = 1'000;

constexpr const char* kEndpointNames[] = {
    "test", "metrics", "metric-payload-options", "search", "query", "variable", "tag-keys", "tag-values", "annotations", "other"};

GrafanaApi::Endpoint endpointOf(std::string_view path) {
  if (path.empty() || path == "/") return GrafanaApi::kTest;
  path.remove_prefix(1);
  for (size_t i = 1; i < GrafanaApi::kOther; ++i) {
    if (path == kEndpointNames[i]) return static_cast<GrafanaApi::Endpoint>(i);
  }
  return GrafanaApi::kOther;
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::string metricNamesText() {
  std::string out;
  for (const std::string& m : stepMetrics()) out += (out.empty() ? "" : ", ") + m;
  return out;
}

void checkJob(const std::string& job, std::string_view where) {
  if (!model::isValidJobId(job)) throw GrafanaBadRequest(std::string(where) + ": invalid job name '" + job.substr(0, 128) + "'");
}

// What a metric target asks for, from its text (`iter_ns job=demo aggregate=max`), its
// payload (simPod; `data` in simPod before 0.3) and the dashboard's ad hoc filters.
StepSeriesSpec metricSpec(const Json& target, std::string_view text, const Json& body, std::string_view where) {
  std::vector<std::string_view> parts = words(text);
  StepSeriesSpec spec;
  spec.metric = std::string(parts.front());
  bool has_job = false, has_ranks = false;
  auto set = [&](std::string_view key, const Json& value) {
    if (key == "job") {
      if (!value.is_string()) throw GrafanaBadRequest(std::string(where) + ": job must be a string");
      spec.job = value.get<std::string>();
      has_job = true;
    } else if (key == "ranks" || key == "rank") {
      spec.ranks = parseRanks(value, where);
      has_ranks = true;
    } else if (key == "aggregate") {
      auto a = value.is_string() ? stepAggregateFromName(value.get_ref<const std::string&>()) : std::nullopt;
      if (!a)
        throw GrafanaBadRequest(std::string(where) + ": aggregate must be one of max, median, avg, min, none; got " +
                                value.dump().substr(0, 64));
      spec.aggregate = *a;
    } else {
      throw GrafanaBadRequest(std::string(where) + ": unknown option '" + std::string(key.substr(0, 64)) + "' (job, ranks, aggregate)");
    }
  };
  for (size_t i = 1; i < parts.size(); ++i) {
    size_t eq = parts[i].find('=');
    if (eq == std::string_view::npos) {
      throw GrafanaBadRequest(std::string(where) + ": expected key=value after the metric, got '" + std::string(parts[i].substr(0, 64)) +
                              "'");
    }
    set(parts[i].substr(0, eq), Json(std::string(parts[i].substr(eq + 1))));
  }
  for (const char* key : {"payload", "data"}) {
    const Json* payload = member(target, key);
    if (!payload) continue;
    if (!payload->is_object()) throw GrafanaBadRequest(std::string(where) + ": " + key + " must be an object, got " + payload->type_name());
    for (const auto& [k, v] : payload->items()) set(k, v);
  }
  if (const Json* filters = member(body, "adhocFilters")) {
    if (!filters->is_array()) throw GrafanaBadRequest("adhocFilters must be an array");
    for (const Json& f : *filters) {
      if (!f.is_object()) throw GrafanaBadRequest("adhocFilters: each filter must be an object with key, operator, value");
      const std::string* key = stringMember(f, "key", "adhocFilters[]");
      const std::string* op = stringMember(f, "operator", "adhocFilters[]");
      const Json* value = member(f, "value");
      if (!key || !op || !value) throw GrafanaBadRequest("adhocFilters: each filter needs key, operator and value");
      if (*op != "=") throw GrafanaBadRequest("adhocFilters: only the = operator is supported, got '" + *op + "'");
      if (*key != "job" && *key != "rank") throw GrafanaBadRequest("adhocFilters: unknown key '" + *key + "' (job, rank)");
      // A target's own job and ranks win over the dashboard-wide filters.
      if (*key == "job" && !has_job) set("job", *value);
      if (*key == "rank" && !has_ranks) set("ranks", *value);
    }
  }
  if (spec.job.empty())
    throw GrafanaBadRequest(std::string(where) + ": metric " + spec.metric + " needs a job (payload {\"job\": ...} or job=NAME)");
  checkJob(spec.job, where);
  return spec;
}

uint64_t maxDataPoints(const Json& body) {
  const Json* v = member(body, "maxDataPoints");
  if (!v) return kDefaultDataPoints;
  if (!v->is_number()) throw GrafanaBadRequest(std::string("maxDataPoints must be a number, got ") + v->type_name());
  double n = v->get<double>();
  if (!(n >= 1 && n <= static_cast<double>(kMaxDataPoints))) {
    throw GrafanaBadRequest("maxDataPoints must be between 1 and " + std::to_string(kMaxDataPoints) + ", got " + v->dump().substr(0, 64));
  }
  return static_cast<uint64_t>(n);
}

}  // namespace

HttpResponse GrafanaApi::handle(std::string_view method, std::string_view path, const std::string& body, const std::atomic<bool>* cancel) {
  Endpoint endpoint = endpointOf(path);
  requests_[endpoint].fetch_add(1, std::memory_order_relaxed);
  HttpResponse r;
  if (endpoint == kOther) {
    r = jsonError(404, "no such Grafana endpoint: /api/v1/grafana" + std::string(path));
  } else if (endpoint == kTest ? method != "GET" : method != "POST") {
    r = jsonError(405, "method " + std::string(method) + " not allowed on /api/v1/grafana" + std::string(path) +
                           (endpoint == kTest ? " (GET it)" : " (POST a JSON body)"));
  } else {
    try {
      QueryOptions options;  // the defaults of POST /api/v1/query
      options.cancel = cancel;
      r = route(endpoint, body, options);
    } catch (const GrafanaBadRequest& e) {
      r = jsonError(e.status(), e.what());
    } catch (const QueryError& e) {
      // As POST /api/v1/query: the statement's fault is 400, a failure while running 422.
      r = jsonError(e.kind() == QueryError::Kind::kExecution ? 422 : 400, e.what());
    }
  }
  if (r.status >= 400) errors_[endpoint].fetch_add(1, std::memory_order_relaxed);
  return r;
}

namespace {

std::vector<std::string> jobNames(const storage::Store& store) {
  std::vector<std::string> names;
  for (const storage::JobInfo& job : store.listJobs()) names.push_back(job.name);
  return names;
}

// The ranks that opened sessions for `job` (its stored topology), ascending; none for an
// unknown job.
std::vector<uint32_t> ranksOf(const storage::Store& store, const std::string& job) {
  checkJob(job, "ranks");
  Result<std::vector<model::RankTopology>> topology = store.topology(job);
  if (!topology.isOk()) {
    if (topology.status().isNotFound()) return {};
    throw GrafanaBadRequest("ranks of " + job + ": " + topology.status().toString(), 500);
  }
  std::vector<uint32_t> ranks;
  for (const model::RankTopology& t : *topology) ranks.push_back(t.rank);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

std::vector<std::string> rankNames(const std::vector<uint32_t>& ranks) {
  std::vector<std::string> names;
  for (uint32_t r : ranks) names.push_back(std::to_string(r));
  return names;
}

// Values a variable (/variable, /search) names: `jobs`, `ranks JOB`, `metrics`, or a
// statement (its first column). nullopt for other text.
std::optional<std::vector<std::string>> namedValues(const storage::Store& store, QueryMetrics& queries, std::string_view text,
                                                    const QueryOptions& options) {
  std::vector<std::string_view> parts = words(text);
  if (isStatement(text)) {
    QueryResult r = queries.run(store, text, options);
    std::vector<std::string> values;
    if (r.columns.empty()) return values;
    for (size_t row = 0; row < r.rows; ++row) values.push_back(grafanaCellText(r, row, 0));
    return values;
  }
  if (parts.size() == 1 && parts[0] == "jobs") return jobNames(store);
  if (parts.size() == 1 && parts[0] == "metrics") return stepMetrics();
  if (parts.size() == 2 && parts[0] == "ranks") return rankNames(ranksOf(store, std::string(parts[1])));
  return std::nullopt;
}

void writeOptions(JsonWriter& w, const std::vector<std::string>& values) {
  w.beginArray();
  for (const std::string& v : values) w.beginObject().key("label").value(v).key("value").value(v).endObject();
  w.endArray();
}

HttpResponse metricsList() {
  HttpResponse r;
  JsonWriter w(&r.body);
  w.beginArray();
  for (const std::string& metric : stepMetrics()) {
    w.beginObject().key("label").value(metric).key("value").value(metric).key("payloads").beginArray();
    // Empty options: the plugin asks /metric-payload-options when the list opens.
    w.beginObject().key("label").value("Job").key("name").value("job").key("type").value("select");
    w.key("placeholder").value("job").key("reloadMetric").value(true).endObject();
    w.beginObject().key("label").value("Ranks").key("name").value("ranks").key("type").value("multi-select");
    w.key("placeholder").value("all ranks").endObject();
    w.beginObject().key("label").value("Aggregate").key("name").value("aggregate").key("type").value("select");
    w.key("placeholder").value("max").key("options");
    writeOptions(w, std::vector<std::string>(std::begin(kStepAggregateNames), std::end(kStepAggregateNames)));
    w.endObject();
    w.endArray().endObject();
  }
  w.endArray();
  return r;
}

}  // namespace

HttpResponse GrafanaApi::route(Endpoint endpoint, const std::string& body_text, const QueryOptions& options) {
  HttpResponse r;
  JsonWriter w(&r.body);
  switch (endpoint) {
    case kTest:
      w.beginObject().key("status").value("ok").endObject();
      return r;
    case kMetrics:
      parseGrafanaBody(body_text, true);  // the current metric and payload: the list is the same for all
      return metricsList();
    case kPayloadOptions: {
      Json body = parseGrafanaBody(body_text, false);
      const std::string* name = stringMember(body, "name", "body");
      const std::string* metric = stringMember(body, "metric", "body");
      if (!name) throw GrafanaBadRequest("metric-payload-options: name (the payload asked for) is required");
      if (metric && !metric->empty() && !isStepMetric(*metric))
        throw GrafanaBadRequest("unknown metric '" + *metric + "' (" + metricNamesText() + ")");
      const Json* payload = member(body, "payload");
      if (payload && !payload->is_object()) throw GrafanaBadRequest("metric-payload-options: payload must be an object");
      if (*name == "job") {
        writeOptions(w, jobNames(store_));
      } else if (*name == "ranks") {
        const std::string* job = payload ? stringMember(*payload, "job", "payload") : nullptr;
        writeOptions(w, job && !job->empty() ? rankNames(ranksOf(store_, *job)) : std::vector<std::string>{});
      } else if (*name == "aggregate") {
        writeOptions(w, std::vector<std::string>(std::begin(kStepAggregateNames), std::end(kStepAggregateNames)));
      } else {
        throw GrafanaBadRequest("metric-payload-options: unknown payload '" + *name + "' (job, ranks, aggregate)");
      }
      return r;
    }
    case kSearch: {
      Json body = parseGrafanaBody(body_text, true);
      const std::string* target = stringMember(body, "target", "body");
      std::string text = target ? *target : "";
      std::optional<std::vector<std::string>> values = namedValues(store_, queries_, text, options);
      if (!values) {
        // The metric picker's type-ahead: the metrics containing what was typed.
        values.emplace();
        for (const std::string& m : stepMetrics()) {
          if (m.find(text) != std::string::npos) values->push_back(m);
        }
      }
      w.beginArray();
      for (const std::string& v : *values) w.value(v);
      w.endArray();
      return r;
    }
    case kVariable: {
      Json body = parseGrafanaBody(body_text, false);
      const Json* payload = member(body, "payload");
      if (!payload || !payload->is_object()) throw GrafanaBadRequest("variable: payload must be an object such as {\"target\": \"jobs\"}");
      const std::string* target = stringMember(*payload, "target", "payload");
      if (!target) throw GrafanaBadRequest("variable: payload.target is required (jobs, ranks JOB, metrics or a SELECT statement)");
      std::optional<std::vector<std::string>> values = namedValues(store_, queries_, *target, options);
      if (!values)
        throw GrafanaBadRequest("variable: unknown query '" + target->substr(0, 128) +
                                "' (jobs, ranks JOB, metrics or a SELECT statement)");
      w.beginArray();
      for (const std::string& v : *values) w.beginObject().key("__text").value(v).key("__value").value(v).endObject();
      w.endArray();
      return r;
    }
    case kTagKeys:
      parseGrafanaBody(body_text, true);
      w.beginArray();
      w.beginObject().key("type").value("string").key("text").value("job").endObject();
      w.beginObject().key("type").value("number").key("text").value("rank").endObject();
      w.endArray();
      return r;
    case kTagValues: {
      Json body = parseGrafanaBody(body_text, false);
      const std::string* key = stringMember(body, "key", "body");
      if (!key) throw GrafanaBadRequest("tag-values: key is required (job or rank)");
      std::vector<std::string> values;
      if (*key == "job") {
        values = jobNames(store_);
      } else if (*key == "rank") {
        // Ranks of every job: the filter applies to whichever job a panel shows.
        std::vector<uint32_t> ranks;
        for (const std::string& job : jobNames(store_)) {
          for (uint32_t rank : ranksOf(store_, job)) ranks.push_back(rank);
        }
        std::sort(ranks.begin(), ranks.end());
        ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
        values = rankNames(ranks);
      } else {
        throw GrafanaBadRequest("tag-values: unknown key '" + key->substr(0, 128) + "' (job, rank)");
      }
      w.beginArray();
      for (const std::string& v : values) w.beginObject().key("text").value(v).endObject();
      w.endArray();
      return r;
    }
    case kAnnotations: {
      Json body = parseGrafanaBody(body_text, false);
      GrafanaRange range = parseRange(body);
      const Json* annotation = member(body, "annotation");
      if (!annotation || !annotation->is_object()) throw GrafanaBadRequest("annotations: annotation (an object with query) is required");
      const std::string* query = stringMember(*annotation, "query", "annotation");
      if (!query || !isStatement(*query))
        throw GrafanaBadRequest("annotations: annotation.query must be a SELECT statement with columns time and text");
      QueryResult result = queries_.run(store_, *query, options);
      std::string error;
      std::vector<GrafanaAnnotation> list = annotationsFromResult(result, range.from_ns, range.to_ns, &error);
      if (!error.empty()) throw GrafanaBadRequest("annotations: " + error);
      std::string echo = annotation->dump();
      w.beginArray();
      for (const GrafanaAnnotation& a : list) {
        w.beginObject().key("annotation").raw(echo);  // the annotation Grafana sent, as SimpleJSON answers it
        w.key("time").value(nsToMs(a.time_ns)).key("title").value(a.title).key("text").value(a.text);
        w.key("tags").beginArray();
        for (const std::string& t : a.tags) w.value(t);
        w.endArray();
        if (a.time_end_ns) w.key("isRegion").value(true).key("timeEnd").value(nsToMs(*a.time_end_ns));
        w.endObject();
      }
      w.endArray();
      return r;
    }
    case kQuery:
      return query(body_text, options);
    case kOther:
    case kEndpoints:
      break;
  }
  throw GrafanaBadRequest("BUG: unrouted Grafana endpoint", 500);
}

HttpResponse GrafanaApi::query(const std::string& body_text, const QueryOptions& options) {
  Json body = parseGrafanaBody(body_text, false);
  GrafanaRange range = parseRange(body);
  uint64_t max_points = maxDataPoints(body);
  if (const Json* interval = member(body, "intervalMs"); interval && !interval->is_number()) {
    throw GrafanaBadRequest(std::string("intervalMs must be a number, got ") + interval->type_name());
  }
  const Json* targets = member(body, "targets");
  if (!targets || !targets->is_array()) throw GrafanaBadRequest("query: targets (an array) is required");
  if (targets->size() > kMaxTargets) throw GrafanaBadRequest("query: at most " + std::to_string(kMaxTargets) + " targets per request");
  HttpResponse r;
  JsonWriter w(&r.body);
  w.beginArray();
  for (size_t i = 0; i < targets->size(); ++i) {
    const Json& target = (*targets)[i];
    if (!target.is_object()) throw GrafanaBadRequest("targets[" + std::to_string(i) + "] must be an object");
    const std::string* ref = stringMember(target, "refId", "target");
    const std::string where = "target " + (ref ? ref->substr(0, 32) : std::to_string(i));
    if (const Json* hide = member(target, "hide"); hide && hide->is_boolean() && hide->get<bool>()) continue;
    const std::string* text = stringMember(target, "target", where);
    if (!text) throw GrafanaBadRequest(where + ": target (a metric name or a SELECT statement) is required");
    if (const std::string* type = stringMember(target, "type", where);
        type && *type != "timeserie" && *type != "timeseries" && *type != "table") {
      throw GrafanaBadRequest(where + ": type must be timeserie or table, got '" + type->substr(0, 32) + "'");
    }
    if (isStatement(*text)) {
      try {
        writeGrafanaTable(queries_.run(store_, *text, options), w);
      } catch (const QueryError& e) {
        throw GrafanaBadRequest(where + ": " + e.what(), e.kind() == QueryError::Kind::kExecution ? 422 : 400);
      }
      continue;
    }
    std::vector<std::string_view> parts = words(*text);
    if (parts.empty() || !isStepMetric(parts.front())) {
      throw GrafanaBadRequest(where + ": unknown metric '" + std::string(parts.empty() ? "" : parts.front().substr(0, 64)) +
                              "' (metrics: " + metricNamesText() + "; or a SELECT statement)");
    }
    StepSeriesSpec spec = metricSpec(target, *text, body, where);
    spec.from_ns = range.from_ns;
    spec.to_ns = range.to_ns;
    spec.max_points = max_points;
    for (const StepSeries& s : stepSeries(queries_, store_, spec)) {
      w.beginObject().key("target").value(s.name).key("datapoints").beginArray();
      for (const StepSeries::Point& p : s.points) w.beginArray().value(p.value).value(p.time_ms).endArray();
      w.endArray().endObject();
    }
  }
  w.endArray();
  return r;
}

void GrafanaApi::writeMetrics(std::string* out) const {
  for (auto [name, help, counters] :
       {std::tuple{"argus_grafana_requests_total", "Grafana datasource requests, by endpoint.", &requests_},
        std::tuple{"argus_grafana_request_errors_total", "Grafana datasource requests answered with an error, by endpoint.", &errors_}}) {
    prometheus::header(out, name, "counter", help);
    for (size_t i = 0; i < kEndpoints; ++i) {
      prometheus::sample(out, name, prometheus::label("endpoint", kEndpointNames[i]),
                         static_cast<double>((*counters)[i].load(std::memory_order_relaxed)));
    }
  }
}

}  // namespace argus::query
