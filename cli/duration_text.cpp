#include "cli/duration_text.h"

#include <charconv>
#include <cstdio>
#include <limits>

namespace argus::cli {

Result<int64_t> parseDurationNs(std::string_view text) {
  if (text == "0") return int64_t{0};
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string_view unit(end, static_cast<size_t>(text.data() + text.size() - end));
  if (ec != std::errc() || value < 0 || end == text.data()) {
    return Status::invalidArgument("bad duration '" + std::string(text) + "': expected a non-negative integer and a unit, e.g. 30d");
  }
  static constexpr std::pair<std::string_view, int64_t> kUnits[] = {
      {"ns", 1}, {"us", 1'000}, {"ms", 1'000'000}, {"s", 1'000'000'000}, {"m", 60'000'000'000},
      {"h", 3'600'000'000'000}, {"d", 86'400'000'000'000}, {"w", 604'800'000'000'000}};
  for (const auto& [name, scale] : kUnits) {
    if (unit != name) continue;
    if (value > std::numeric_limits<int64_t>::max() / scale) {
      return Status::invalidArgument("duration '" + std::string(text) + "' overflows 64-bit nanoseconds");
    }
    return value * scale;
  }
  return Status::invalidArgument("bad duration '" + std::string(text) + "': unit must be one of ns, us, ms, s, m, h, d, w");
}

std::string formatDurationNs(double ns) {
  char buf[32];
  if (ns < 1e3) {
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  } else if (ns < 1e6) {
    std::snprintf(buf, sizeof buf, "%.1f us", ns / 1e3);
  } else if (ns < 1e9) {
    std::snprintf(buf, sizeof buf, "%.1f ms", ns / 1e6);
  } else if (ns < 3600e9) {
    std::snprintf(buf, sizeof buf, "%.2f s", ns / 1e9);
  } else if (ns < 86400e9) {
    std::snprintf(buf, sizeof buf, "%.1f h", ns / 3600e9);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f d", ns / 86400e9);
  }
  return buf;
}

}  // namespace argus::cli
