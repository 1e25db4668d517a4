// selectNth: the k-th smallest of a buffer of integers and the one after it, for exact
// medians and quantiles over many values (per-step medians across 10,000 ranks).
//
// Large buffers first go through a sampling prefilter (Floyd and Rivest's idea): the
// values of a 512-value sample around rank k's place in it bound the k-th smallest with
// high probability, and one pass counts the values below that window and copies out the
// ones inside it, about a sixth of the buffer. The window, or the whole buffer when
// the sample misjudged, then goes through the radix select.
//
// The radix select works on the value range: one pass finds min and max, one counts the
// values in 2,048 equal slices of the range, one moves the slice holding rank k to the
// front; the slice repeats the same on its smaller range (at most six rounds for 64-bit
// values) until few values are left for selectSmall. Each pass is a straight loop
// whose branches are predictable, where nth_element's partitions mispredict half their
// compares: three times as fast on 10,240 step times (21 against 67 ms for 1,000 medians).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include "base/small_select.h"

namespace argus::query {

struct NthPair {
  int64_t nth;   // the k-th smallest (0-based)
  int64_t next;  // the (k+1)-th smallest; nth when k is the last rank
};

namespace select_nth_detail {

// REQUIRES k < v.size(). Reorders v (a permutation of it stays). `next` is the value after
// rank k within v.
inline NthPair radixSelect(std::span<int64_t> v, size_t k) {
  constexpr size_t kSmall = 256;  // below this, selectSmall is as fast
  constexpr int kSliceBits = 11;
  bool have_next = false;  // `next` found outside the slice that holds rank k
  int64_t next = 0;
  while (v.size() > kSmall) {
    int64_t lo = v[0], hi = v[0];
    for (int64_t x : v) {  // min and max as two selects each, not minmax_element's branches
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    if (lo == hi) return {lo, k + 1 < v.size() ? lo : (have_next ? next : lo)};
    const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    // About four values a slice: zeroing and scanning the counts is paid per slice.
    const int bits = std::clamp(static_cast<int>(std::bit_width(v.size())) - 2, 6, kSliceBits);
    const int shift = std::max(0, static_cast<int>(std::bit_width(range)) - bits);
    auto slice = [lo, shift](int64_t x) { return static_cast<size_t>((static_cast<uint64_t>(x) - static_cast<uint64_t>(lo)) >> shift); };
    uint32_t counts[size_t{1} << kSliceBits];
    std::fill_n(counts, size_t{1} << bits, 0);
    for (int64_t x : v) ++counts[slice(x)];
    size_t s = 0, below = 0;
    for (; below + counts[s] <= k; ++s) below += counts[s];
    // The value after rank k lies in a later slice when k is its slice's last: the least
    // value above the slice (there is one unless k is the last rank of all).
    if (k - below + 1 == counts[s] && below + counts[s] < v.size()) {
      int64_t above = hi;  // a pass of its own: in the loop below it made a serial chain
      for (int64_t x : v) above = std::min(above, slice(x) > s ? x : hi);
      have_next = true;
      next = above;
    }
    size_t m = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      if (slice(v[i]) == s) std::swap(v[m++], v[i]);  // a permutation, as nth_element leaves it
    }
    v = v.first(m);
    k -= below;
  }
  selectSmall(v.data(), v.size(), k);
  const int64_t nth = v[k];
  if (k + 1 < v.size()) return {nth, *std::min_element(v.begin() + static_cast<ptrdiff_t>(k) + 1, v.end())};
  return {nth, have_next ? next : nth};
}

}  // namespace select_nth_detail

// REQUIRES k < v.size(). Reorders v (a permutation of it stays).
inline NthPair selectNth(std::span<int64_t> v, size_t k) {
  constexpr size_t kSampleFrom = 4096;  // below this the radix select alone is as fast
  constexpr size_t kSample = 512;
  // Rank k's place in the sample varies by about sqrt(512 / 4) = 11 either side; 40 either
  // side misses once in thousands of buffers, each miss costing one pass.
  constexpr size_t kMargin = 40;
  const size_t n = v.size();
  if (n < kSampleFrom) return select_nth_detail::radixSelect(v, k);

  // Evenly spread picks, each jittered inside its stride, so no period in the values (ranks
  // in a fixed order) lines up with the picks.
  int64_t sample[kSample];
  const size_t stride = n / kSample;
  for (size_t j = 0; j < kSample; ++j) sample[j] = v[j * stride + static_cast<size_t>((j * 0x9E3779B97F4A7C15ull) >> 40) % stride];
  const size_t at = static_cast<size_t>(static_cast<unsigned __int128>(k) * kSample / n);
  const size_t lo_at = at > kMargin ? at - kMargin : 0;
  const size_t hi_at = std::min(at + kMargin, kSample - 1);
  // The sample's extremes bound nothing: past them the window is open.
  selectSmall(sample, kSample, lo_at);
  const int64_t lo = lo_at == 0 ? INT64_MIN : sample[lo_at];
  selectSmall(sample + lo_at + 1, kSample - lo_at - 1, hi_at - lo_at - 1);  // moves what lies past lo_at
  const int64_t hi = hi_at == kSample - 1 ? INT64_MAX : sample[hi_at];

  // One pass: count the values below the window and copy the ones in it out (a store per
  // value; v stays as it was). The window takes about a sixth of the values; a quarter is
  // room enough, and a fuller one (a misjudged sample, many equal values) is not used.
  const size_t room = n / 4;
  const std::unique_ptr<int64_t[]> window = std::make_unique_for_overwrite<int64_t[]>(room + 1);
  int64_t* const w = window.get();
  const uint64_t width = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  size_t below = 0, m = 0;
  for (const int64_t x : v) {
    below += x < lo;
    w[std::min(m, room)] = x;
    m += static_cast<uint64_t>(x) - static_cast<uint64_t>(lo) <= width;
  }
  if (m > room || k < below || k - below >= m) return select_nth_detail::radixSelect(v, k);  // the sample misjudged
  NthPair p = select_nth_detail::radixSelect(std::span<int64_t>(w, m), k - below);
  if (k - below + 1 == m && k + 1 < n) {
    // Rank k is the window's last: the next value is the least above the window.
    int64_t above = INT64_MAX;
    for (int64_t x : v) above = std::min(above, x > hi ? x : INT64_MAX);
    p.next = above;
  }
  return p;
}

}  // namespace argus::query
