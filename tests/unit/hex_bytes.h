// Bytes from lowercase hex digits, for golden tests that pin a documented encoding byte for
// byte. Spaces are skipped, so a dump can be pasted as the docs print it ("01 07 01 ...").
#pragma once

#include <string>
#include <string_view>

namespace argus::testing {

inline std::string unhex(std::string_view digits) {
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string out;
  int high = -1;
  for (char c : digits) {
    if (c == ' ') continue;
    if (high < 0) {
      high = nibble(c);
    } else {
      out.push_back(static_cast<char>(high << 4 | nibble(c)));
      high = -1;
    }
  }
  return out;
}

}  // namespace argus::testing
