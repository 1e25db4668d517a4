// SlidingOrderStat: the non-NULL values of a sliding window frame kept sorted, so that the
// order statistics of every frame (median, quantiles, MAD, min, max) come without sorting
// each frame anew. The frame moves by insert and erase: a frame that slides by one row (one
// insert, then one erase) replaces the value leaving by the one entering in one pass, which
// in a frame of up to 64 values is branch-free vector work (slideSmall), in a larger one
// two binary searches and a shift: O(w) word moves per row against O(w log w) for a sort,
// and no allocation once the buffer has grown to the largest frame. Values added in a burst
// (a frame's first rows) are sorted once and merged. NaN sorts above every number, as in
// ORDER BY and min/max.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace argus::query {

// Replaces x, one of the n sorted values, by y, keeping them sorted (NaN above every
// number), in one pass of four lanes at a time with no branch per value: where each value
// goes follows from its own and its neighbours' comparisons with x and y. A binary search's
// steps each wait on the last one's load, and a shift's loop exit (or memmove call)
// mispredicts with the slide's random length. Reads values[n, n + kSlidePad) and may write
// them.
inline constexpr size_t kSlidePad = 8;
void slideSmall(int64_t* values, size_t n, int64_t x, int64_t y);
void slideSmall(double* values, size_t n, double x, double y);
// The quantile between the sorted values' ranks lo and lo + 1 at frac (quantile_cont).
// REQUIRES: lo < n.
template <typename T>
double quantileAt(const T* values, size_t n, size_t lo, double frac) {
  const double lo_v = static_cast<double>(values[lo]);
  if (frac == 0 || lo + 1 >= n) return lo_v;
  return lo_v + (static_cast<double>(values[lo + 1]) - lo_v) * frac;
}
// The most values slideQuantiles keeps in vector registers.
inline constexpr size_t kRegisterFrame = 24;
// m slides of a rolling frame in one call: row r replaces leaving[r] by entering[r] (equal
// values: nothing moves) and writes quantileAt(lo, frac) to out[r], the frame held in
// registers across the rows. REQUIRES: lo < n <= kRegisterFrame.
void slideQuantiles(int64_t* values, size_t n, const int64_t* entering, const int64_t* leaving, size_t m, size_t lo, double frac, double* out);
void slideQuantiles(double* values, size_t n, const double* entering, const double* leaving, size_t m, size_t lo, double frac, double* out);

template <typename T>
class SlidingOrderStat {
 public:
  void clear() {
    n_ = 0;
    pending_.clear();
  }
  void insert(T x) { pending_.push_back(x); }
  // REQUIRES: x is in the frame.
  void erase(T x) {
    if (pending_.size() == 1) {
      // The frame slid by one row (one in, now one out): one pass moves the values between
      // the two places instead of a shift for the insert and another for the erase. When
      // the row out is the row in (or an equal value), nothing moves: x may not be stored.
      const T y = pending_[0];
      pending_.clear();
      if (less(x, y) || less(y, x)) replace(x, y);
      return;
    }
    flush();
    T* v = values_.data();
    T* at = std::lower_bound(v, v + n_, x, less);
    std::move(at + 1, v + n_, at);
    --n_;
  }
  size_t size() {
    flush();
    return n_;
  }
  // The k-th smallest. REQUIRES: k < size().
  T at(size_t k) {
    flush();
    return values_[k];
  }
  // Interpolated between the two nearest ranks (quantile_cont). REQUIRES: size() > 0.
  double quantileCont(double q) {
    flush();
    rankOf(q);
    return quantileAt(values_.data(), n_, rank_lo_, rank_frac_);
  }
  // A rolling frame's m next rows, each one value in and one out (leaving[r] is in the frame
  // when entering[r] comes): out[r] = quantileCont(q) after row r. A frame that fits in
  // registers slides in one call (slideQuantiles); a larger one row by row, where each
  // slide's wait on the last one's stores overlaps the per-row work (the same loop in memory
  // in one call was slower). REQUIRES: size() > 0.
  void slideCont(const T* entering, const T* leaving, size_t m, double q, double* out) {
    flush();
    if (n_ > kRegisterFrame) {
      for (size_t r = 0; r < m; ++r) {
        insert(entering[r]);
        erase(leaving[r]);
        out[r] = quantileCont(q);
      }
      return;
    }
    rankOf(q);
    slideQuantiles(values_.data(), n_, entering, leaving, m, rank_lo_, rank_frac_, out);
  }
  // The value at rank ceil(q * n) (quantile_disc). REQUIRES: size() > 0.
  T quantileDisc(double q) {
    flush();
    size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(n_)));
    return values_[k == 0 ? 0 : k - 1];
  }
  // Median absolute deviation, median(|x - median(x)|): the deviations, walked outward from
  // the median, come in increasing order from two sorted runs, so no second sort is needed
  // (O(n) per call). REQUIRES: size() > 0.
  double mad() {
    flush();
    const double m = quantileCont(0.5);
    const size_t n = n_;
    const T* v = values_.data();
    // left: the values below the median, walked downward; right: the rest, upward.
    size_t right = static_cast<size_t>(std::lower_bound(v, v + n, m, [](T a, double t) { return static_cast<double>(a) < t; }) - v);
    size_t left = right;  // v[left - 1] is the next one below
    const size_t lo_rank = (n - 1) / 2, hi_rank = n / 2;
    double lo_dev = 0, dev = 0;
    for (size_t k = 0; k <= hi_rank; ++k) {
      bool take_left = right >= n || (left > 0 && m - static_cast<double>(v[left - 1]) <= static_cast<double>(v[right]) - m);
      dev = take_left ? m - static_cast<double>(v[--left]) : static_cast<double>(v[right++]) - m;
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
  // quantileCont's ranks for the frame's size.
  void rankOf(double q) {
    if (n_ == rank_n_ && q == rank_q_) return;  // a rolling frame keeps its size: once
    const double pos = q * static_cast<double>(n_ - 1);
    rank_lo_ = static_cast<size_t>(std::floor(pos));
    rank_frac_ = pos - static_cast<double>(rank_lo_);
    rank_n_ = n_;
    rank_q_ = q;
  }
  // Frames up to this size slide by slideSmall, larger ones by searches and a shift.
  static constexpr size_t kSmallFrame = 64;
  // Replaces x (a value of the frame) by y.
  void replace(T x, T y) {
    if (n_ <= kSmallFrame) {
      slideSmall(values_.data(), n_, x, y);
      return;
    }
    // x's place is i (the values below x); y's follows from j (the values up to y): y < x
    // puts every value up to y before i, y > x every value up to x.
    size_t i = countBelow([x](T v) { return less(v, x); });
    const size_t j = countBelow([y](T v) { return !less(y, v); });
    T* v = values_.data();
    if (j <= i) {  // y goes to j, the values in [j, i) move up by one
      for (; i > j; --i) v[i] = v[i - 1];
      v[j] = y;
    } else {  // y goes to j - 1, the values in (i, j) move down by one
      for (; i + 1 < j; ++i) v[i] = v[i + 1];
      v[j - 1] = y;
    }
  }
  // How many leading values satisfy `below` (true on a prefix of the sorted values):
  // a binary search whose steps are conditional moves, not branches (std::lower_bound's
  // mispredicted about half their steps). REQUIRES: n_ > 0.
  template <typename Below>
  size_t countBelow(Below below) const {
    const T* base = values_.data();
    for (size_t n = n_; n > 1;) {
      const size_t half = n / 2;
      base = below(base[half]) ? base + half : base;
      n -= half;
    }
    return static_cast<size_t>(base - values_.data()) + (below(*base) ? 1 : 0);
  }
  // Inline: every read of the frame calls it, and nearly always nothing is pending.
  void flush() {
    if (!pending_.empty()) merge();
  }
  void merge() {
    const size_t m = pending_.size();
    if (values_.size() < n_ + m + kSlidePad) values_.resize(n_ + m + kSlidePad);
    T* v = values_.data();
    if (m <= 8) {
      for (T x : pending_) {
        T* at = std::upper_bound(v, v + n_, x, less);
        std::move_backward(at, v + n_, v + n_ + 1);
        *at = x;
        ++n_;
      }
    } else {
      std::sort(pending_.begin(), pending_.end(), less);
      std::copy(pending_.begin(), pending_.end(), v + n_);
      std::inplace_merge(v, v + n_, v + n_ + m, less);
      n_ += m;
    }
    pending_.clear();
  }

  // values_[0, n_) sorted; kSlidePad more (at least) for slideSmall's vector reads.
  std::vector<T> values_;
  size_t n_ = 0;
  std::vector<T> pending_;  // inserted, not yet merged
  // quantileCont's ranks for a frame of rank_n_ values and q = rank_q_.
  size_t rank_n_ = 0, rank_lo_ = 0;
  double rank_q_ = -1, rank_frac_ = 0;
};

}  // namespace argus::query
