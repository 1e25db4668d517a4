// HttpRouter: maps HTTP requests to answers, independent of the transport so it can be
// tested without sockets. Endpoints are documented in docs/http/api.md.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "query/http/grafana_api.h"
#include "query/http/http_message.h"
#include "query/http/http_tokens.h"
#include "query/http/query_metrics.h"
#include "storage/store.h"

namespace argus::query {

// Splits "a=1&b=x%20y" into a map, percent-decoding keys and values.
std::map<std::string, std::string> parseQueryString(std::string_view query);

class HttpRouter {
 public:
  // Appends Prometheus text for parts outside the query layer (ingest counters).
  using MetricsWriter = std::function<void(std::string*)>;

  HttpRouter(storage::Store& store, MetricsWriter extra_metrics);
  // Asks the live capture sessions of a job (ranks; empty: all) to dump their flight
  // recorders for steps [from, to]; returns how many were asked (ingest::Server's
  // requestFlightRecorderDump). Unset: the endpoint answers 503.
  using FlightRecorderDumper =
      std::function<size_t(const std::string& job, const std::vector<uint32_t>& ranks, uint64_t from_step, uint64_t to_step)>;
  void setFlightRecorderDumper(FlightRecorderDumper dumper) { dumper_ = std::move(dumper); }
  // With tokens, every /api/v1/ request needs `Authorization: Bearer TOKEN` (401 without a
  // known token, 403 for a read token on a control endpoint); /healthz and /metrics stay
  // open. Set before serving.
  void setTokens(HttpTokens tokens) { tokens_ = std::move(tokens); }
  // The most bytes of JSON one /api/v1/scan answer holds: the rows past it are cut as past
  // `limit` are (stats.truncated). Bounds what a scan of wide rows (histograms) can cost.
  static constexpr size_t kDefaultMaxScanBytes = size_t{64} << 20;
  void setMaxScanBytes(size_t bytes) { max_scan_bytes_ = bytes; }

  HttpResponse handle(const HttpRequest& request);
  // The statements run for /api/v1/query and Grafana (QueryMetrics).
  const QueryMetrics& queries() const { return query_metrics_; }
  // Transport-level refusals (oversized requests, bad HTTP) count here too.
  void countRefusal(int status);

 private:
  HttpResponse metrics();
  HttpResponse jobs();
  HttpResponse scan(const std::map<std::string, std::string>& params);
  HttpResponse kernel(const std::map<std::string, std::string>& params);
  HttpResponse query(const std::map<std::string, std::string>& params, const std::string& sql, const std::atomic<bool>* cancel);
  HttpResponse flightRecorder(const std::string& job, const std::map<std::string, std::string>& params);
  void count(int status);
  // nullopt when the request may go on, else the refusal.
  std::optional<HttpResponse> refuseUnauthorized(const HttpRequest& request, std::string_view path) const;

  storage::Store& store_;
  MetricsWriter extra_metrics_;
  FlightRecorderDumper dumper_;
  std::optional<HttpTokens> tokens_;
  QueryMetrics query_metrics_;
  GrafanaApi grafana_{store_, query_metrics_};
  std::atomic<uint64_t> requests_2xx_{0}, requests_4xx_{0}, requests_5xx_{0};
  std::atomic<uint64_t> scan_rows_{0};
  size_t max_scan_bytes_ = kDefaultMaxScanBytes;
  std::atomic<uint64_t> queries_{0}, query_errors_{0};
};

}  // namespace argus::query
