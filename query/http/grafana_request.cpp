#include "query/http/grafana_request.h"

#include <cctype>
#include <charconv>

#include "query/http/grafana_time.h"

namespace argus::query {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

uint32_t parseRank(std::string_view text, std::string_view where) {
  text = trim(text);
  uint64_t rank = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), rank);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty() || rank > UINT32_MAX) {
    throw GrafanaBadRequest(std::string(where) + ": bad rank '" + std::string(text.substr(0, 32)) + "' (a non-negative integer)");
  }
  return static_cast<uint32_t>(rank);
}

void addRanks(const Json& v, std::string_view where, std::vector<uint32_t>* out) {
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > UINT32_MAX) throw GrafanaBadRequest(std::string(where) + ": rank " + v.dump() + " out of range");
    out->push_back(static_cast<uint32_t>(v.get<uint64_t>()));
  } else if (v.is_string()) {
    std::string_view s = trim(v.get_ref<const std::string&>());
    if (s.empty() || s == "*" || s == "all") return;
    while (!s.empty()) {
      size_t comma = s.find(',');
      out->push_back(parseRank(s.substr(0, comma), where));
      if (comma == std::string_view::npos) break;
      s.remove_prefix(comma + 1);
    }
  } else {
    throw GrafanaBadRequest(std::string(where) + ": ranks must be a non-negative integer, a string or an array of those, got " +
                            v.type_name());
  }
}

}  // namespace

Json parseGrafanaBody(std::string_view body, bool empty_ok) {
  if (trim(body).empty()) {
    if (empty_ok) return Json::object();
    throw GrafanaBadRequest("request body is empty: expected a JSON object");
  }
  Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw GrafanaBadRequest("request body is not valid JSON");
  if (!j.is_object()) throw GrafanaBadRequest(std::string("request body must be a JSON object, got ") + j.type_name());
  return j;
}

const Json* member(const Json& object, const char* name) {
  auto it = object.find(name);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

const std::string* stringMember(const Json& object, const char* name, std::string_view where) {
  const Json* v = member(object, name);
  if (!v) return nullptr;
  if (!v->is_string()) throw GrafanaBadRequest(std::string(where) + "." + name + " must be a string, got " + v->type_name());
  return &v->get_ref<const std::string&>();
}

GrafanaRange parseRange(const Json& body) {
  GrafanaRange range;
  const Json* r = member(body, "range");
  if (!r) return range;
  if (!r->is_object()) throw GrafanaBadRequest(std::string("range must be an object with from and to, got ") + r->type_name());
  for (auto [name, field] : {std::pair{"from", &range.from_ns}, std::pair{"to", &range.to_ns}}) {
    const std::string* text = stringMember(*r, name, "range");
    if (!text) throw GrafanaBadRequest(std::string("range.") + name + " is required (an RFC 3339 time)");
    std::optional<int64_t> ns = parseRfc3339Ns(*text);
    if (!ns) throw GrafanaBadRequest(std::string("range.") + name + ": '" + text->substr(0, 64) + "' is not an RFC 3339 time after 1970");
    *field = *ns;
  }
  if (range.from_ns > range.to_ns) throw GrafanaBadRequest("range.from is after range.to");
  return range;
}

std::vector<uint32_t> parseRanks(const Json& value, std::string_view where) {
  std::vector<uint32_t> ranks;
  if (value.is_array()) {
    for (const Json& v : value) addRanks(v, where, &ranks);
  } else {
    addRanks(value, where, &ranks);
  }
  return ranks;
}

bool isStatement(std::string_view text) {
  text = trim(text);
  std::string word;
  for (char c : text.substr(0, text.find_first_of(" \t\r\n("))) word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return word == "select" || word == "with" || word == "explain";
}

}  // namespace argus::query
