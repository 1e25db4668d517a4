#include "query/http/grafana_time.h"

namespace argus::query {

namespace {

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's
// days_from_civil).
int64_t daysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool isLeap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

// Reads exactly `n` digits at *pos.
bool digits(std::string_view s, size_t* pos, size_t n, int64_t* out) {
  if (*pos + n > s.size()) return false;
  int64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[*pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

bool expect(std::string_view s, size_t* pos, char c) {
  if (*pos >= s.size() || s[*pos] != c) return false;
  ++*pos;
  return true;
}

}  // namespace

std::optional<int64_t> parseRfc3339Ns(std::string_view s) {
  size_t p = 0;
  int64_t year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;  // (GCC 12 at -O3 cannot see digits() set them)
  if (!digits(s, &p, 4, &year) || !expect(s, &p, '-') || !digits(s, &p, 2, &month) || !expect(s, &p, '-') || !digits(s, &p, 2, &day)) {
    return std::nullopt;
  }
  if (p >= s.size() || (s[p] != 'T' && s[p] != 't' && s[p] != ' ')) return std::nullopt;
  ++p;
  if (!digits(s, &p, 2, &hour) || !expect(s, &p, ':') || !digits(s, &p, 2, &minute) || !expect(s, &p, ':') || !digits(s, &p, 2, &second)) {
    return std::nullopt;
  }
  static constexpr int kMonthDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1) return std::nullopt;
  if (day > kMonthDays[month - 1] + (month == 2 && isLeap(year) ? 1 : 0)) return std::nullopt;
  if (hour > 23 || minute > 59 || second > 60) return std::nullopt;  // 60: a leap second
  int64_t fraction_ns = 0;
  if (p < s.size() && s[p] == '.') {
    ++p;
    size_t first = p;
    int64_t scale = 100'000'000;
    while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
      fraction_ns += (s[p] - '0') * scale;
      scale /= 10;
      ++p;
    }
    if (p == first) return std::nullopt;
  }
  int64_t offset_s = 0;
  if (p < s.size() && (s[p] == 'Z' || s[p] == 'z')) {
    ++p;
  } else if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
    int64_t sign = s[p] == '-' ? -1 : 1;
    ++p;
    int64_t oh, om;
    if (!digits(s, &p, 2, &oh) || !expect(s, &p, ':') || !digits(s, &p, 2, &om) || oh > 23 || om > 59) return std::nullopt;
    offset_s = sign * (oh * 3600 + om * 60);
  } else {
    return std::nullopt;
  }
  if (p != s.size()) return std::nullopt;
  int64_t seconds = daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset_s;
  // int64 nanoseconds reach 2262-04-11; earlier than the epoch is refused too.
  constexpr int64_t kMaxSeconds = INT64_MAX / 1'000'000'000 - 1;
  if (seconds < 0 || seconds > kMaxSeconds) return std::nullopt;
  return seconds * 1'000'000'000 + fraction_ns;
}

}  // namespace argus::query
