// Fuzzes ingest::AuthTable::parse (the argusd --auth file).
//
// Input: the file's text. Invariants, checked against an independent reading of the text
// when it parses: the entry count is the number of non-blank lines, and every `JOB TOKEN`
// line is admitted by check(); a job that is neither listed nor covered by `*` is unknown.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/auth.h"
#include "tests/fuzz/fuzz_util.h"

using argus::ingest::AuthTable;

namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The fields of each non-blank line, comments removed.
std::vector<std::vector<std::string_view>> entriesOf(std::string_view text) {
  std::vector<std::vector<std::string_view>> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    line = line.substr(0, line.find('#'));
    std::vector<std::string_view> fields;
    for (size_t i = 0; i < line.size();) {
      if (isSpace(line[i])) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < line.size() && !isSpace(line[j])) ++j;
      fields.push_back(line.substr(i, j - i));
      i = j;
    }
    if (!fields.empty()) out.push_back(fields);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = argus::fuzz::asView(data, size);
  auto table = AuthTable::parse(text, "fuzz");
  if (!table.isOk()) return 0;
  auto entries = entriesOf(text);
  FUZZ_CHECK(table.value().entries() == entries.size());
  bool has_wildcard = false;
  for (const auto& e : entries) {
    FUZZ_CHECK(e.size() == 2);
    has_wildcard = has_wildcard || e[0] == "*";
    if (e[0] != "*") FUZZ_CHECK(table.value().check(e[0], e[1]) == AuthTable::Verdict::kAllowed);
  }
  // Job ids never contain '/', so this one is listed only through `*`.
  auto verdict = table.value().check("not/a/job", "");
  FUZZ_CHECK(has_wildcard || verdict == AuthTable::Verdict::kUnknownJob);
  return 0;
}
