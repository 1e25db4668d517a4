// The end of a run of equal BIGINT keys, for operators that take rows already grouped by a
// key (a scan's rows by rank): window partitions and GROUP BY runs.
#pragma once

#include <cstddef>
#include <cstdint>

namespace argus::query {

// The first i in (start, n) with x[i] != x[start], or n. REQUIRES start < n. Against the
// run's first value, four rows a test: a compare and branch per row was ~6 instructions a
// row of a GROUP BY rank.
inline size_t equalRunEnd(const int64_t* x, size_t start, size_t n) {
  const int64_t first = x[start];
  size_t i = start + 1;
  while (i + 4 <= n && ((x[i] ^ first) | (x[i + 1] ^ first) | (x[i + 2] ^ first) | (x[i + 3] ^ first)) == 0) i += 4;
  while (i < n && x[i] == first) ++i;
  return i;
}

}  // namespace argus::query
