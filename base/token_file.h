// Token files: argusd's --auth (ingest, `JOB TOKEN`) and --http-tokens (HTTP, `ROLE TOKEN`)
// share one layout, read here: whitespace-separated fields, one entry per line, `#` starts a
// comment, blank lines are skipped. Tokens are compared in constant time.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace argus {

struct TokenFileLine {
  size_t line_no = 0;                    // 1-based, for messages ("file:3: ...")
  std::vector<std::string_view> fields;  // views into the text given to splitTokenFile
};

// The non-empty lines of `text`, comments removed.
std::vector<TokenFileLine> splitTokenFile(std::string_view text);

// The whole file, or IOError "cannot read <what> <path>".
Result<std::string> readTokenFile(const std::string& path, std::string_view what);

// Compares in time independent of where the first difference is.
bool constantTimeEquals(std::string_view a, std::string_view b);

}  // namespace argus
