// GrafanaApi: argusd as a Grafana datasource, under /api/v1/grafana (the URL configured in
// Grafana). Speaks both JSON datasource contracts (docs/http/grafana.md has every endpoint
// with examples):
//   simPod "JSON" datasource (simpod-json-datasource; README and openapi.yaml of
//   github.com/simPod/GrafanaJsonDatasource): GET / test, POST /metrics,
//   /metric-payload-options, /query (targets[].target + payload), /variable, /tag-keys,
//   /tag-values;
//   its predecessor SimpleJSON (README of github.com/grafana/simple-json-datasource): POST
//   /search, /query (targets[].target, type timeserie|table, range, intervalMs,
//   maxDataPoints), /annotations (annotation.query).
// A target is a step metric (stepMetrics(): time series per rank or aggregated, see
// step_series.h) or a query-language statement (a table). Bad requests get 400 with a
// message Grafana shows. Thread-safe: requests share only the store and atomic counters.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "query/http/http_message.h"
#include "query/http/query_metrics.h"

namespace argus::query {

class GrafanaApi {
 public:
  GrafanaApi(const storage::Store& store, QueryMetrics& queries) : store_(store), queries_(queries) {}

  // `path`: what follows /api/v1/grafana ("", "/", "/query", ...). cancel: set when the
  // client has gone; the queries it asked for stop (QueryOptions::cancel).
  HttpResponse handle(std::string_view method, std::string_view path, const std::string& body, const std::atomic<bool>* cancel = nullptr);
  // Appends argus_grafana_requests_total{endpoint} and argus_grafana_request_errors_total{endpoint}.
  void writeMetrics(std::string* out) const;

  enum Endpoint : size_t {
    kTest,
    kMetrics,
    kPayloadOptions,
    kSearch,
    kQuery,
    kVariable,
    kTagKeys,
    kTagValues,
    kAnnotations,
    kOther,
    kEndpoints
  };

 private:
  HttpResponse route(Endpoint endpoint, const std::string& body, const QueryOptions& options);
  HttpResponse query(const std::string& body, const QueryOptions& options);

  const storage::Store& store_;
  QueryMetrics& queries_;
  std::array<std::atomic<uint64_t>, kEndpoints> requests_{}, errors_{};
};

}  // namespace argus::query
