#include "base/allocator.h"

#include <cstddef>

// jemalloc's control call, bound only when jemalloc is linked (weak: null otherwise).
extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen) __attribute__((weak));

namespace argus {

bool releaseFreedMemory() {
  if (mallctl == nullptr) return false;
  return mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0) == 0;  // 4096: MALLCTL_ARENAS_ALL
}

}  // namespace argus
