#pragma once

#include <algorithm>
#include <thread>

namespace argus {

// How many threads a parallel part of one query uses by default: one per core, at most 8
// (past that a query's stripes and groups are too few to keep more busy, and concurrent
// queries share the cores anyway).
inline unsigned defaultWorkerThreads() { return std::clamp(std::thread::hardware_concurrency(), 1u, 8u); }

}  // namespace argus
