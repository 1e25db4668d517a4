// The shim's one way to speak: a line on stderr with the "argus: " prefix, written with one
// write(2) so that lines of many ranks do not interleave mid-line. Never throws.
#pragma once

#include <atomic>
#include <string_view>

namespace argus::capture::shim {

void shimLog(std::string_view line);

// Logs `line` the first time it is called for `flag`, then stays silent (an error is
// logged once, however often it repeats).
inline void shimLogOnce(std::atomic<bool>& flag, std::string_view line) {
  if (!flag.exchange(true, std::memory_order_relaxed)) shimLog(line);
}

}  // namespace argus::capture::shim
