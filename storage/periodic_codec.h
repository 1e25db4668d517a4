// The periodic integer codec (docs/format/codecs.md#integer-codecs, id 11): each value
// against the value `period` rows before it, runs of exact repeats as counts. The nested
// tables repeat their rows step after step (a training loop launches the same kernels in
// the same order), so kernels.signature, phase and count and the collectives' keys code as
// their first step and a few counts, and decode by copying: as dictionary or plain + zstd
// every read of such a chunk paid for a zstd frame (~0.6 us, however small).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace argus::storage {

struct PeriodicChoice {
  size_t period = 0;
  size_t bytes = 0;  // exact payload size
};

// The best period among those the first values suggest (the distances at which the first
// two values recur), with its payload size; false when none applies (fewer than 16 values,
// or neither value recurs within 4,096 rows).
bool choosePeriod(std::span<const int64_t> values, PeriodicChoice* out);

// Appends the payload at `period` (1 <= period <= values.size()).
void encodePeriodic(std::span<const int64_t> values, size_t period, std::string* out);

// Corruption for a period outside [1, rows], an empty or overlong run, a repeat before a
// full period, a truncated payload or trailing bytes.
Status decodePeriodic(std::string_view raw, size_t rows, std::vector<int64_t>* out);

}  // namespace argus::storage
