#include "capture/shim/shim_log.h"

#include <unistd.h>

#include <cstring>

namespace argus::capture::shim {

void shimLog(std::string_view line) {
  // A fixed buffer: no allocation, so logging works when memory is what failed.
  char buf[512];
  static constexpr char kPrefix[] = "argus: ";
  size_t n = sizeof kPrefix - 1;
  std::memcpy(buf, kPrefix, n);
  size_t body = line.size() < sizeof buf - n - 1 ? line.size() : sizeof buf - n - 1;
  std::memcpy(buf + n, line.data(), body);
  n += body;
  buf[n++] = '\n';
  ssize_t rc = ::write(STDERR_FILENO, buf, n);
  (void)rc;  // nowhere else to report a failed write to stderr
}

}  // namespace argus::capture::shim
