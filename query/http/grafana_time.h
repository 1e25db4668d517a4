// Time as Grafana sends it: `range.from` / `range.to` are RFC 3339 timestamps
// ("2016-10-31T06:33:44.866Z", docs/http/grafana.md); answers carry Unix milliseconds.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace argus::query {

// Parses "YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)" (a space may replace the `T`;
// digits of the fraction past nanoseconds are dropped) into Unix nanoseconds. Returns
// nullopt for anything else, or a time outside years 1970..2262 (what int64 ns holds).
std::optional<int64_t> parseRfc3339Ns(std::string_view text);

// Unix nanoseconds -> Unix milliseconds as Grafana plots them (fractions kept: steps may be
// shorter than a millisecond apart).
inline double nsToMs(int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

}  // namespace argus::query
