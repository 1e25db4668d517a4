#include "base/json_string.h"

#include <cstdint>
#include <cstdio>

namespace argus {

namespace {

// Length of the well-formed UTF-8 sequence at s[i], or 0 when there is none (Unicode
// Table 3-7: the second byte's range depends on the first).
size_t utf8Length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  const uint8_t c = byte(0);
  if (c < 0x80) return 1;
  size_t n;
  uint8_t lo = 0x80, hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (i + n > s.size() || byte(1) < lo || byte(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if ((byte(k) & 0xc0) != 0x80) return 0;
  }
  return n;
}

}  // namespace

void appendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<uint8_t>(s[i]);
    switch (c) {
      case '"': out->append("\\\""); ++i; continue;
      case '\\': out->append("\\\\"); ++i; continue;
      case '\n': out->append("\\n"); ++i; continue;
      case '\r': out->append("\\r"); ++i; continue;
      case '\t': out->append("\\t"); ++i; continue;
      default: break;
    }
    if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out->append(buf);
      ++i;
    } else if (size_t n = utf8Length(s, i); n > 0) {
      out->append(s.substr(i, n));
      i += n;
    } else {
      out->append("\xef\xbf\xbd");  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    }
  }
  out->push_back('"');
}

}  // namespace argus
