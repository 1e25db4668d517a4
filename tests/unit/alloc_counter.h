// Counts heap allocations of the whole test binary: replaces the global operator new and
// delete. Include it only in a file named *_alloc_test.cpp (tests/CMakeLists.txt gives each
// its own executable), then compare allocationCount() before and after the code under test.
#pragma once

#include <atomic>
#include <cstdlib>
#include <new>

namespace argus::testing {
inline std::atomic<long> g_allocations{0};
inline long allocationCount() { return g_allocations.load(std::memory_order_relaxed); }
}  // namespace argus::testing

void* operator new(std::size_t n) {
  argus::testing::g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// The nothrow form too (std::stable_partition's temporary buffer uses it): left to the
// runtime, its memory would come from the sanitizer's allocator and return through ours.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  argus::testing::g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n == 0 ? 1 : n);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
