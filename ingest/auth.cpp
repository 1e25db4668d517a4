// AuthTable (see auth.h).
#include "ingest/auth.h"

#include <fstream>
#include <sstream>

#include "model/step_record.h"

namespace argus::ingest {

namespace {

// Compares in time independent of where the first difference is.
bool constantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

bool anyTokenMatches(const std::vector<std::string>& tokens, std::string_view token) {
  bool ok = false;
  for (const auto& t : tokens) ok |= constantTimeEquals(t, token);
  return ok;
}

}  // namespace

Result<AuthTable> AuthTable::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::ioError("cannot read auth file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path);
}

Result<AuthTable> AuthTable::parse(std::string_view text, std::string_view source) {
  AuthTable table;
  size_t line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    std::vector<std::string_view> fields;
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      size_t start = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
      if (i > start) fields.push_back(line.substr(start, i - start));
    }
    if (fields.empty()) continue;
    auto where = std::string(source) + ":" + std::to_string(line_no);
    if (fields.size() != 2) return Status::invalidArgument(where + ": expected `JOB TOKEN`");
    if (fields[0] != "*" && !model::isValidJobId(fields[0])) {
      return Status::invalidArgument(where + ": invalid job id '" + std::string(fields[0]) + "'");
    }
    table.tokens_[std::string(fields[0])].emplace_back(fields[1]);
    ++table.entries_;
  }
  return table;
}

AuthTable::Verdict AuthTable::check(std::string_view job, std::string_view token) const {
  auto it = tokens_.find(std::string(job));
  if (it == tokens_.end()) it = tokens_.find("*");
  if (it == tokens_.end()) return Verdict::kUnknownJob;
  return anyTokenMatches(it->second, token) ? Verdict::kAllowed : Verdict::kWrongToken;
}

}  // namespace argus::ingest
