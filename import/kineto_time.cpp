#include "import/kineto_time.h"

#include <string>

namespace argus::import {

std::optional<int64_t> microsTextToNs(std::string_view text) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  // Collect the significant digits and where the decimal point sits among them.
  std::string digits;
  int64_t point = -1;  // number of digits before the decimal point
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c >= '0' && c <= '9') {
      if (digits.size() < 64) {
        digits.push_back(c);
      } else if (point >= 0) {
        continue;  // far below the nanosecond: cannot matter beyond the rounding digit
      } else {
        return std::nullopt;  // an integer part of more than 64 digits
      }
    } else if (c == '.' && point < 0) {
      point = static_cast<int64_t>(digits.size());
    } else {
      break;
    }
  }
  if (digits.empty()) return std::nullopt;
  if (point < 0) point = static_cast<int64_t>(digits.size());
  if (i < text.size()) {
    if (text[i] != 'e' && text[i] != 'E') return std::nullopt;
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) exp_negative = text[i++] == '-';
    if (i == text.size()) return std::nullopt;
    int64_t exponent = 0;
    for (; i < text.size(); ++i) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      if (exponent < 1000) exponent = exponent * 10 + (text[i] - '0');
    }
    point += exp_negative ? -exponent : exponent;
  }
  // ns = the digits with the point moved 3 places right; the next digit rounds.
  int64_t ns_digits = point + 3;  // digits that form the integer nanoseconds
  unsigned __int128 value = 0;
  const unsigned __int128 kLimit = static_cast<unsigned __int128>(INT64_MAX) + (negative ? 1 : 0);
  for (int64_t d = 0; d < ns_digits; ++d) {
    int digit = d < static_cast<int64_t>(digits.size()) ? digits[static_cast<size_t>(d)] - '0' : 0;
    value = value * 10 + static_cast<unsigned>(digit);
    if (value > kLimit) return std::nullopt;
  }
  if (ns_digits >= 0 && ns_digits < static_cast<int64_t>(digits.size()) && digits[static_cast<size_t>(ns_digits)] >= '5') {
    ++value;
    if (value > kLimit) return std::nullopt;
  }
  if (ns_digits < 0) value = 0;  // below half a nanosecond
  if (!negative) return static_cast<int64_t>(value);
  return value == 0 ? 0 : -static_cast<int64_t>(value - 1) - 1;  // reaches INT64_MIN without overflow
}

}  // namespace argus::import
