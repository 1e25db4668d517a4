// Sparklines: a series as one line of block characters (U+2581..U+2588), for reports read in
// a terminal, such as step time over a run.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace argus::cli {

enum class Fold { kMax, kMean };

// How many consecutive values of `count` share a column when they fold into `width` (> 0).
size_t columnRun(size_t count, size_t width);

// The series in at most `width` columns: each column folds a run of columnRun values (the
// last run may be shorter) by their max or their mean.
std::vector<double> foldColumns(std::span<const double> values, size_t width, Fold fold);

// One block per value, its height linear in the value over [lo, hi]: the lowest block at or
// below lo, the full block at or above hi (every value the lowest when hi <= lo).
std::string sparkline(std::span<const double> values, double lo, double hi);

}  // namespace argus::cli
