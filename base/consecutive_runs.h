// Runs of consecutive integers in a sorted list: a pushed-down rank range arrives as its
// ranks, and both the store's listing (one seek per block for a run) and EXPLAIN (first-last)
// want it back as runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace argus {

// Calls fn(first, last) for each maximal run first, first + 1, ..., last of `sorted`
// (ascending, no duplicates), in order.
template <typename Fn>
void forConsecutiveRuns(std::span<const uint32_t> sorted, Fn&& fn) {
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i + 1;
    while (j < sorted.size() && sorted[j] == sorted[j - 1] + 1) ++j;
    fn(sorted[i], sorted[j - 1]);
    i = j;
  }
}

}  // namespace argus
