// SlidingOrderStat: the non-NULL values of a sliding window frame kept sorted, so that the
// order statistics of every frame (median, quantiles, MAD, min, max) come without sorting
// each frame anew. The frame moves by insert (binary search, then a shift) and erase: for a
// rolling median over w rows that is O(log w + w) word moves per row against O(w log w) for
// a sort, and no allocation once the vector has grown to the largest frame; a frame that
// slides by one row (one insert, then one erase) moves once. Values added in
// a burst (a frame's first rows) are sorted once and merged. NaN sorts above every number,
// as in ORDER BY and min/max.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace argus::query {

// Both places of a slide in a small frame of n sorted values (NaN above every number): how
// many are below x, the value leaving, and how many are not above y, the value entering.
// Every value is compared, four at a time, with no branch per value: each step of a binary
// search waits on the last one's load (21-row rolling median: 2-6% less time than searches).
struct SlidePlaces {
  size_t below_x, upto_y;
};
SlidePlaces countPlaces(const int64_t* values, size_t n, int64_t x, int64_t y);
SlidePlaces countPlaces(const double* values, size_t n, double x, double y);

template <typename T>
class SlidingOrderStat {
 public:
  void clear() {
    values_.clear();
    pending_.clear();
  }
  void insert(T x) { pending_.push_back(x); }
  // REQUIRES: x is in the frame.
  void erase(T x) {
    if (pending_.size() == 1) {
      // The frame slid by one row (one in, now one out): one shift of the values between
      // the two instead of a shift for the insert and another for the erase. When the row
      // out is the row in (or an equal value), nothing moves.
      const T y = pending_[0];
      pending_.clear();
      if (less(x, y) || less(y, x)) replace(x, y);
      return;
    }
    flush();
    values_.erase(std::lower_bound(values_.begin(), values_.end(), x, less));
  }
  size_t size() {
    flush();
    return values_.size();
  }
  // The k-th smallest. REQUIRES: k < size().
  T at(size_t k) {
    flush();
    return values_[k];
  }
  // Interpolated between the two nearest ranks (quantile_cont). REQUIRES: size() > 0.
  double quantileCont(double q) {
    flush();
    if (values_.size() != rank_n_ || q != rank_q_) {  // a rolling frame keeps its size: once
      const double pos = q * static_cast<double>(values_.size() - 1);
      rank_lo_ = static_cast<size_t>(std::floor(pos));
      rank_frac_ = pos - static_cast<double>(rank_lo_);
      rank_n_ = values_.size();
      rank_q_ = q;
    }
    const size_t lo = rank_lo_;
    const double lo_v = static_cast<double>(values_[lo]);
    if (rank_frac_ == 0 || lo + 1 >= values_.size()) return lo_v;
    return lo_v + (static_cast<double>(values_[lo + 1]) - lo_v) * rank_frac_;
  }
  // The value at rank ceil(q * n) (quantile_disc). REQUIRES: size() > 0.
  T quantileDisc(double q) {
    flush();
    size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(values_.size())));
    return values_[k == 0 ? 0 : k - 1];
  }
  // Median absolute deviation, median(|x - median(x)|): the deviations, walked outward from
  // the median, come in increasing order from two sorted runs, so no second sort is needed
  // (O(n) per call). REQUIRES: size() > 0.
  double mad() {
    flush();
    const double m = quantileCont(0.5);
    const size_t n = values_.size();
    // left: the values below the median, walked downward; right: the rest, upward.
    size_t right = static_cast<size_t>(std::lower_bound(values_.begin(), values_.end(), m,
                                                        [](T v, double t) { return static_cast<double>(v) < t; }) -
                                       values_.begin());
    size_t left = right;  // values_[left - 1] is the next one below
    const size_t lo_rank = (n - 1) / 2, hi_rank = n / 2;
    double lo_dev = 0, dev = 0;
    for (size_t k = 0; k <= hi_rank; ++k) {
      bool take_left = right >= n || (left > 0 && m - static_cast<double>(values_[left - 1]) <= static_cast<double>(values_[right]) - m);
      dev = take_left ? m - static_cast<double>(values_[--left]) : static_cast<double>(values_[right++]) - m;
      if (k == lo_rank) lo_dev = dev;
    }
    return (lo_dev + dev) / 2;
  }
  size_t memoryBytes() const { return (values_.capacity() + pending_.capacity()) * sizeof(T); }

 private:
  static bool less(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a)) return false;
      return std::isnan(b) || a < b;
    } else {
      return a < b;
    }
  }
  // Replaces x (in values_) by y, keeping values_ sorted: the values between x's place and
  // y's move by one toward x's. x's place is i (the values below x); y's follows from j (the
  // values up to y): y < x puts every value up to y before i, y > x every value up to x.
  void replace(T x, T y) {
    // A loop would move the few values between the places of a small frame's slide without a
    // call, but its exit mispredicts: the memmove call GCC makes of it is faster.
    if (values_.size() <= kSmallFrame) {
      const SlidePlaces p = countPlaces(values_.data(), values_.size(), x, y);
      shiftInto(p.below_x, p.upto_y, y);
      return;
    }
    shiftInto(countBelow(values_, [x](T v) { return less(v, x); }), countBelow(values_, [y](T v) { return !less(y, v); }), y);
  }
  // Replaces the value at i by y, where j values are not above y: the values between move by
  // one toward i. y below the value at i (j <= i) goes to j, above it to j - 1.
  void shiftInto(size_t i, size_t j, T y) {
    if (j <= i) {
      for (; i > j; --i) values_[i] = values_[i - 1];
      values_[j] = y;
    } else {
      for (; i + 1 < j; ++i) values_[i] = values_[i + 1];
      values_[j - 1] = y;
    }
  }
  // Frames up to this size find a slide's places by countPlaces, larger ones by searches.
  static constexpr size_t kSmallFrame = 64;
  // How many leading values satisfy `below` (true on a prefix of the sorted values):
  // a binary search whose steps are conditional moves, not branches (std::lower_bound's
  // mispredicted about half their steps).
  template <typename Below>
  static size_t countBelow(const std::vector<T>& values, Below below) {
    if (values.empty()) return 0;
    const T* base = values.data();
    for (size_t n = values.size(); n > 1;) {
      const size_t half = n / 2;
      base = below(base[half]) ? base + half : base;
      n -= half;
    }
    return static_cast<size_t>(base - values.data()) + (below(*base) ? 1 : 0);
  }
  // Inline: every read of the frame calls it, and nearly always nothing is pending.
  void flush() {
    if (!pending_.empty()) merge();
  }
  void merge() {
    if (pending_.size() <= 8) {
      for (T x : pending_) values_.insert(std::upper_bound(values_.begin(), values_.end(), x, less), x);
    } else {
      std::sort(pending_.begin(), pending_.end(), less);
      size_t mid = values_.size();
      values_.insert(values_.end(), pending_.begin(), pending_.end());
      std::inplace_merge(values_.begin(), values_.begin() + static_cast<std::ptrdiff_t>(mid), values_.end(), less);
    }
    pending_.clear();
  }

  std::vector<T> values_;   // sorted
  std::vector<T> pending_;  // inserted, not yet merged
  // quantileCont's ranks for a frame of rank_n_ values and q = rank_q_.
  size_t rank_n_ = 0, rank_lo_ = 0;
  double rank_q_ = -1, rank_frac_ = 0;
};

}  // namespace argus::query
