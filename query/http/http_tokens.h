// HttpTokens: bearer tokens for argusd's HTTP API (`argusd --http-tokens FILE`,
// docs/cli/argusd.md). File format, one entry per line: `ROLE TOKEN`, ROLE `read` (GET
// endpoints, queries, the Grafana datasource) or `control` (also POST flight-recorder
// dumps). `#` starts a comment; blank lines are ignored; the layout is the --auth file's
// (base/token_file.h). Thread-safe (const after load).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace argus::query {

enum class HttpRole : uint8_t { kRead, kControl };

class HttpTokens {
 public:
  // InvalidArgument names the line of a malformed entry; a file without entries is refused
  // too (it would lock every client out).
  static Result<HttpTokens> load(const std::string& path);
  static Result<HttpTokens> parse(std::string_view text, std::string_view source = "http tokens file");

  // The role of the token an `Authorization: Bearer TOKEN` header carries; nullopt for a
  // missing or malformed header or an unknown token. Compares against every token in
  // constant time, so timing does not tell how much of a guess was right.
  std::optional<HttpRole> roleOf(std::string_view authorization) const;
  size_t entries() const { return tokens_.size(); }

 private:
  std::vector<std::pair<std::string, HttpRole>> tokens_;
};

}  // namespace argus::query
