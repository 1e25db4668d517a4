// The body of POST /api/v1/query (docs/http/api.md): either the query text itself, or a JSON
// object {"q": "...", "format": ..., "timeout_ms": ..., "memory_limit": ..., "pushdown": ...}
// whose members override the URL parameters of the same names. A query never starts with
// '{', so the first non-blank byte tells the two apart.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace argus::query {

struct QueryRequest {
  std::string sql;
  std::map<std::string, std::string> params;  // URL parameters, then the JSON body's
};

// nullopt and *error set when the body is JSON but not a valid request.
std::optional<QueryRequest> readQueryRequest(std::map<std::string, std::string> params, std::string body, std::string* error);

}  // namespace argus::query
