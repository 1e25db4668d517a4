#include "query/common/query_context.h"

#include <cstdio>

#include "query/common/errors.h"

namespace argus::query {

QueryContext::QueryContext(const QueryOptions& options)
    : options_(options), start_(std::chrono::steady_clock::now()), deadline_(start_ + options.deadline) {}

void QueryContext::check() {
  if (options_.cancel && options_.cancel->load(std::memory_order_relaxed)) throw ExecutionError("query cancelled on request");
  if (std::chrono::steady_clock::now() >= deadline_) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(options_.deadline).count();
    throw ExecutionError("query cancelled: it ran past its deadline of " + std::to_string(ms) + " ms");
  }
}

int64_t QueryContext::elapsedNs() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count();
}

void QueryContext::account(int64_t delta, const char* what) {
  std::lock_guard lock(memory_mu_);
  if (delta < 0 && static_cast<size_t>(-delta) > used_) {
    used_ = 0;
  } else {
    used_ = static_cast<size_t>(static_cast<int64_t>(used_) + delta);
  }
  if (used_ > stats_.peak_memory_bytes) stats_.peak_memory_bytes = used_;
  if (delta > 0 && used_ > options_.memory_limit_bytes) {
    throw ExecutionError(std::string("query cancelled: ") + what + " needs more than the memory limit of " +
                         bytesText(options_.memory_limit_bytes) + " (" + bytesText(used_) + " held)");
  }
}

std::string bytesText(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  }
  return buf;
}

}  // namespace argus::query
