// AuthTable (see auth.h).
#include "ingest/auth.h"

#include "base/token_file.h"
#include "model/step_record.h"

namespace argus::ingest {

namespace {

bool anyTokenMatches(const std::vector<std::string>& tokens, std::string_view token) {
  bool ok = false;
  for (const auto& t : tokens) ok |= constantTimeEquals(t, token);
  return ok;
}

}  // namespace

Result<AuthTable> AuthTable::load(const std::string& path) {
  Result<std::string> text = readTokenFile(path, "auth file");
  if (!text.isOk()) return text.status();
  return parse(*text, path);
}

Result<AuthTable> AuthTable::parse(std::string_view text, std::string_view source) {
  AuthTable table;
  for (const TokenFileLine& line : splitTokenFile(text)) {
    const auto& fields = line.fields;
    auto where = std::string(source) + ":" + std::to_string(line.line_no);
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
