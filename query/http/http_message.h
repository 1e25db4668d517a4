// HttpRequest and HttpResponse: what the transport (HttpServer) hands the router and gets
// back, without sockets, so every endpoint is testable in-process.
#pragma once

#include <atomic>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace argus::query {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query string, as sent
  std::string body;
  std::string authorization;  // the Authorization header, empty when absent
  // Set once the client has closed its connection (the server watches it while a query
  // runs), so the query stops instead of computing an answer nobody reads. May be null.
  const std::atomic<bool>* client_gone = nullptr;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // further headers (WWW-Authenticate)
};

// {"error": message, "message": message} with `status`: `error` as every argusd answer has
// it, `message` where Grafana looks for the text it shows.
HttpResponse jsonError(int status, std::string_view message);

}  // namespace argus::query
