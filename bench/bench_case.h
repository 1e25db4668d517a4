// What the per-call capture benches (bench_nvtx_source, bench_nccl_plugin) share: a case
// to time (n iterations of one call sequence), the median of the batches' figures, and
// the one-clock-read case both print as their reference line.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include "capture/nvtx/epoch_clock.h"

namespace argus::bench {

struct Case {
  const char* label;
  const char* unit;  // what one iteration is
  std::function<void(long)> run;
};

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

inline Case clockReadCase() {
  return {"EpochClock::nowNs (one clock read, reference)", "call", [](long n) {
            int64_t sum = 0;
            for (long i = 0; i < n; ++i) sum += capture::nvtx::EpochClock::nowNs();
            if (sum == 42) std::puts("");  // keeps the reads
          }};
}

}  // namespace argus::bench
