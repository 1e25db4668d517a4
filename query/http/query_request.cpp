#include "query/http/query_request.h"

#include <nlohmann/json.hpp>

namespace argus::query {

std::optional<QueryRequest> readQueryRequest(std::map<std::string, std::string> params, std::string body, std::string* error) {
  size_t first = body.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || body[first] != '{') return QueryRequest{std::move(body), std::move(params)};
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    *error = "query: the body starts with '{' but is not a JSON object";
    return std::nullopt;
  }
  QueryRequest r{{}, std::move(params)};
  for (const auto& [key, value] : j.items()) {
    if (key == "q") {
      continue;  // checked below
    } else if (key == "format" || key == "pushdown") {
      if (!value.is_string()) {
        *error = "query: '" + key + "' must be a string";
        return std::nullopt;
      }
      r.params[key] = value.get<std::string>();
    } else if (key == "timeout_ms" || key == "memory_limit") {
      if (!value.is_number_unsigned()) {
        *error = "query: '" + key + "' must be a non-negative integer";
        return std::nullopt;
      }
      r.params[key] = std::to_string(value.get<uint64_t>());
    } else {
      *error = "query: unknown member '" + key + "' (q, format, timeout_ms, memory_limit, pushdown)";
      return std::nullopt;
    }
  }
  if (!j.contains("q") || !j["q"].is_string()) {
    *error = "query: the JSON body needs \"q\", the query text as a string";
    return std::nullopt;
  }
  r.sql = j["q"].get<std::string>();
  return r;
}

}  // namespace argus::query
