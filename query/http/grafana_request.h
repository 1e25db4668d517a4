// Reading Grafana's JSON request bodies (docs/http/grafana.md): every field is checked for
// presence and type, and a mistake becomes a GrafanaBadRequest naming the field, which
// GrafanaApi answers with 400.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace argus::query {

using Json = nlohmann::json;

class GrafanaBadRequest : public std::runtime_error {
 public:
  explicit GrafanaBadRequest(const std::string& message, int status = 400) : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

// The body as a JSON object; an empty body is `{}` when `empty_ok` (Grafana sends none to
// some endpoints).
Json parseGrafanaBody(std::string_view body, bool empty_ok);

// The member `name` of `object`; nullptr when absent or null.
const Json* member(const Json& object, const char* name);
// A string member; nullptr when absent; throws when present with another type.
const std::string* stringMember(const Json& object, const char* name, std::string_view where);
// `range.from` / `range.to` (RFC 3339) as Unix ns; [0, INT64_MAX] without a range.
struct GrafanaRange {
  int64_t from_ns = 0;
  int64_t to_ns = INT64_MAX;
};
GrafanaRange parseRange(const Json& body);

// Ranks as a payload or filter gives them: a number, a string ("3", "0,2,5"; "", "*" and
// "all" mean every rank: an empty list) or an array of those.
std::vector<uint32_t> parseRanks(const Json& value, std::string_view where);

// Whether a target's text is a query-language statement rather than a metric name.
bool isStatement(std::string_view text);

}  // namespace argus::query
