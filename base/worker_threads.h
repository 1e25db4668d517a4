#pragma once

#include <algorithm>
#include <cstddef>
#include <system_error>
#include <thread>
#include <vector>

namespace argus {

// How many threads a parallel part of one query uses by default: one per core, at most 8
// (past that a query's stripes and groups are too few to keep more busy, and concurrent
// queries share the cores anyway).
inline unsigned defaultWorkerThreads() { return std::clamp(std::thread::hardware_concurrency(), 1u, 8u); }

// Runs work(i) for each i in [0, n): i >= 1 on threads of their own, 0 on the caller's, then
// joins them. When no more threads can be started, the caller runs the rest itself. work
// must not throw.
template <typename Work>
void runOnThreads(size_t n, Work&& work) {
  std::vector<std::thread> pool;
  try {
    for (size_t i = 1; i < n; ++i) pool.emplace_back([&work, i] { work(i); });
  } catch (const std::system_error&) {
  }
  if (n > 0) work(0);
  for (size_t i = pool.size() + 1; i < n; ++i) work(i);
  for (auto& t : pool) t.join();
}

}  // namespace argus
