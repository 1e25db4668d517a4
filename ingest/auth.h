// AuthTable: per-job tokens for ingest sessions (docs/cli/argusd.md, "--auth").
//
// File format, one entry per line: `JOB TOKEN`. `#` starts a comment; blank lines are
// ignored. JOB may be `*`, which admits any job not listed by name with that token. A job
// may have several lines (several valid tokens, e.g. during rotation).
// With a table loaded, a job neither listed nor covered by `*` is refused as unknown.
// Without a table (no --auth), every job and token is accepted ("open mode").
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace argus::ingest {

class AuthTable {
 public:
  enum class Verdict : uint8_t { kAllowed, kUnknownJob, kWrongToken };

  // Parses the file; InvalidArgument names the line of a malformed entry.
  static Result<AuthTable> load(const std::string& path);
  static Result<AuthTable> parse(std::string_view text, std::string_view source = "auth file");

  // Thread-safe (const).
  Verdict check(std::string_view job, std::string_view token) const;
  size_t entries() const { return entries_; }

 private:
  std::unordered_map<std::string, std::vector<std::string>> tokens_;  // job (or "*") -> tokens
  size_t entries_ = 0;
};

}  // namespace argus::ingest
