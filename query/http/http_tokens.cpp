#include "query/http/http_tokens.h"

#include "base/token_file.h"

namespace argus::query {

Result<HttpTokens> HttpTokens::load(const std::string& path) {
  Result<std::string> text = readTokenFile(path, "http tokens file");
  if (!text.isOk()) return text.status();
  return parse(*text, path);
}

Result<HttpTokens> HttpTokens::parse(std::string_view text, std::string_view source) {
  HttpTokens tokens;
  for (const TokenFileLine& line : splitTokenFile(text)) {
    auto where = std::string(source) + ":" + std::to_string(line.line_no);
    if (line.fields.size() != 2) return Status::invalidArgument(where + ": expected `ROLE TOKEN` (ROLE read or control)");
    HttpRole role;
    if (line.fields[0] == "read") {
      role = HttpRole::kRead;
    } else if (line.fields[0] == "control") {
      role = HttpRole::kControl;
    } else {
      return Status::invalidArgument(where + ": unknown role '" + std::string(line.fields[0]) + "' (read or control)");
    }
    tokens.tokens_.emplace_back(std::string(line.fields[1]), role);
  }
  if (tokens.tokens_.empty()) return Status::invalidArgument(std::string(source) + ": no tokens (every request would be refused)");
  return tokens;
}

std::optional<HttpRole> HttpTokens::roleOf(std::string_view authorization) const {
  constexpr std::string_view kBearer = "Bearer ";
  if (!authorization.starts_with(kBearer)) return std::nullopt;
  std::string_view token = authorization.substr(kBearer.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  if (token.empty()) return std::nullopt;
  // Every token is compared, matched or not.
  std::optional<HttpRole> role;
  for (const auto& [t, r] : tokens_) {
    if (constantTimeEquals(t, token) && (!role || r == HttpRole::kControl)) role = r;
  }
  return role;
}

}  // namespace argus::query
