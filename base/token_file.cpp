#include "base/token_file.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace argus {

std::vector<TokenFileLine> splitTokenFile(std::string_view text) {
  std::vector<TokenFileLine> lines;
  size_t line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    TokenFileLine entry{line_no, {}};
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      size_t start = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
      if (i > start) entry.fields.push_back(line.substr(start, i - start));
    }
    if (!entry.fields.empty()) lines.push_back(std::move(entry));
  }
  return lines;
}

Result<std::string> readTokenFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::ioError("cannot read " + std::string(what) + " " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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

}  // namespace argus
