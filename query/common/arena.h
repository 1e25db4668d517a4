// Arena: owns the bytes of strings and the histograms that materialized vectors point to
// (aggregate results, sorted runs, query results). Strings are bump-allocated in blocks, so
// copying a string in costs no allocation of its own. Not thread-safe.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <string_view>
#include <vector>

#include "base/byte_arena.h"
#include "model/duration_histogram.h"

namespace argus::query {

class Arena {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  Arena(Arena&&) = default;
  Arena& operator=(Arena&&) = default;

  // Returns a view of a copy that lives as long as the arena (or until clear()).
  std::string_view copy(std::string_view s);
  const model::DurationHistogram* copy(const model::DurationHistogram& h);
  model::DurationHistogram* newHistogram();
  // Bytes held (blocks and histogram buckets): what memory caps count.
  size_t bytes() const { return strings_.bytes() + hist_bytes_; }
  void clear();

 private:
  ByteArena strings_;
  std::deque<model::DurationHistogram> hists_;
  size_t hist_bytes_ = 0;
};

}  // namespace argus::query
