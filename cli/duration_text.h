// Durations as people write and read them: "30d", "12h", "90m", "45s", "250ms" in, and
// "812 ns", "4.4 us", "563.1 ms", "1.15 s" out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace argus::cli {

// Parses an integer with a unit (ns, us, ms, s, m, h, d, w); "0" alone means zero.
// InvalidArgument names the text on a missing unit, a bad number or an overflow.
Result<int64_t> parseDurationNs(std::string_view text);

// Formats in the largest unit that keeps the number at or above 1.
std::string formatDurationNs(double ns);

}  // namespace argus::cli
