// Handing freed memory back to the OS. argusd and the CLI link jemalloc set to keep freed
// pages for reuse instead of purging them on a timer (cli/malloc_conf.cpp); argusd calls
// this every 10 s in which no query ran (cli/argusd_main.cpp).
#pragma once

namespace argus {

// Returns the freed pages the allocator keeps to the OS (jemalloc: every arena's purge).
// False where the process's allocator has no such call (glibc malloc, the sanitizers').
bool releaseFreedMemory();

}  // namespace argus
