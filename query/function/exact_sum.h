// The exact sum of a run of BIGINT values, as avg() keeps it over a run of one group: 128 bits,
// which no count of int64 values below 2^64 can overflow.
#pragma once

#include <cstddef>
#include <cstdint>

namespace argus::query {

__int128 exactSum(const int64_t* x, size_t n);

}  // namespace argus::query
