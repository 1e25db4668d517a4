#include "query/execution/sliding_order_stat.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>
#include <type_traits>

#include "base/cpu_clones.h"

// The lanes never cross a call: the helpers below inline into each clone, whose ABI is its own.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace argus::query {
namespace {

using IntLanes = int64_t __attribute__((vector_size(32)));
using DoubleLanes = double __attribute__((vector_size(32)));

// One slide, replacing x by y in one pass over the sorted values, with no counting first:
// where a value goes follows from its own and its neighbours' comparisons with x and y.
// y < x ("down"): the values in (y, x] move one place up, y goes before the first of them;
// x < y ("up"): the values in [x, y] move one place down (the first x leaves), y goes after
// the last of them. The direction is a coin flip on noisy data: computing both in every block
// of four and keeping one cost as much as the branch's mispredictions. NaN sorts above every
// number: a NaN x has every number below it, every value is not above a NaN y.
template <typename T, typename Lanes>
struct Slide {
  static constexpr bool kNaN = std::is_floating_point_v<T>;
  // Left of the first value: not above any y of "down".
  static constexpr T kLowest = kNaN ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::min();

  bool down;  // y below x
  IntLanes x_nans, y_nans, lasts;
  Lanes xs, ys;

  [[gnu::always_inline]] Slide(T x, T y, size_t n) {
    const int64_t x_nan = kNaN && x != x ? -1 : 0, y_nan = kNaN && y != y ? -1 : 0;
    down = y_nan == 0 && (x_nan != 0 || y < x);
    const int64_t last = static_cast<int64_t>(n) - 1;
    x_nans = IntLanes{} + x_nan;
    y_nans = IntLanes{} + y_nan;
    lasts = IntLanes{} + last;
    xs = Lanes{} + x;
    ys = Lanes{} + y;
  }
  [[gnu::always_inline]] IntLanes belowX(const Lanes& v) const {
    if constexpr (kNaN) {
      return (v < xs) | (x_nans & (v == v));
    } else {
      return v < xs;
    }
  }
  [[gnu::always_inline]] IntLanes uptoY(const Lanes& v) const {
    if constexpr (kNaN) {
      return (v <= ys) | y_nans;
    } else {
      return v <= ys;
    }
  }
  // The block of lanes idx after the slide, from it and its neighbour blocks as they were.
  [[gnu::always_inline]] Lanes block(const Lanes& before, const Lanes& cur, const Lanes& following, const IntLanes& idx) const {
    if (down) {
      const Lanes left = __builtin_shufflevector(before, cur, 3, 4, 5, 6);
      const Lanes moved_up = belowX(left) ? left : cur;
      return uptoY(left) ? (uptoY(cur) ? cur : ys) : moved_up;
    }
    const Lanes right = __builtin_shufflevector(cur, following, 1, 2, 3, 4);
    const Lanes moved_down = (uptoY(right) & (idx < lasts)) ? right : ys;
    return (belowX(cur) | ~uptoY(cur)) ? cur : moved_down;
  }
};

// A slide in memory. The values are read and written in the same blocks of four, so that
// the next slide's reads are forwarded from this one's writes (a read straddling two writes
// waits for them to reach the cache). Inlined into each CPU's clone of its caller.
template <typename T, typename Lanes>
[[gnu::always_inline]] inline void slideIn(T* values, size_t n, T x, T y) {
  const Slide<T, Lanes> slide(x, y, n);
  IntLanes idx = {0, 1, 2, 3};
  Lanes before = Lanes{} + Slide<T, Lanes>::kLowest, cur;
  std::memcpy(&cur, values, sizeof cur);
  for (size_t k = 0; k < n; k += 4) {
    Lanes following;
    std::memcpy(&following, values + k + 4, sizeof following);
    const Lanes out = slide.block(before, cur, following, idx);
    std::memcpy(values + k, &out, sizeof out);
    before = cur;
    cur = following;
    idx += 4;
  }
}

bool sameValue(int64_t x, int64_t y) { return x == y; }
bool sameValue(double x, double y) { return x == y || (x != x && y != y); }  // NaN: equal to NaN here

// Rolling slides of a frame of at most 4 * B values held in B registers across the rows: a
// slide waits on the last one's lanes, not on its writes coming back from memory.
template <typename T, typename Lanes, size_t B>
[[gnu::always_inline]] inline void slideInRegisters(T* values, size_t n, const T* entering, const T* leaving, size_t m, size_t lo, double frac,
                                                    double* out) {
  Lanes v[B];
  std::memcpy(v, values, sizeof v);
  alignas(32) T spilled[4 * B];
  // The lanes of ranks lo and lo + 1, which quantileAt reads: spilling all B each row was a
  // tenth of a rolling median's instructions.
  const size_t lo_lane = lo / 4, hi_lane = std::min((lo + 1) / 4, B - 1);
  for (size_t r = 0; r < m; ++r) {
    if (!sameValue(leaving[r], entering[r])) {
      const Slide<T, Lanes> slide(leaving[r], entering[r], n);
      Lanes before = Lanes{} + Slide<T, Lanes>::kLowest;
      [&]<size_t... b>(std::index_sequence<b...>) {
        auto step = [&](auto block) {
          constexpr size_t k = decltype(block)::value;
          const Lanes cur = v[k];
          const IntLanes idx = {4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3};
          v[k] = slide.block(before, cur, v[k + 1 < B ? k + 1 : k], idx);
          before = cur;
        };
        (step(std::integral_constant<size_t, b>{}), ...);
      }(std::make_index_sequence<B>{});
    }
    [&]<size_t... b>(std::index_sequence<b...>) {
      ((b == lo_lane || b == hi_lane ? (void)std::memcpy(spilled + 4 * b, &v[b], sizeof v[b]) : (void)0), ...);
    }(std::make_index_sequence<B>{});
    out[r] = quantileAt(spilled, n, lo, frac);
  }
  std::memcpy(values, v, sizeof v);
}

template <typename T, typename Lanes>
[[gnu::always_inline]] inline void slideQuantilesIn(T* values, size_t n, const T* entering, const T* leaving, size_t m, size_t lo, double frac,
                                                    double* out) {
  switch ((n + 3) / 4) {
    case 1: return slideInRegisters<T, Lanes, 1>(values, n, entering, leaving, m, lo, frac, out);
    case 2: return slideInRegisters<T, Lanes, 2>(values, n, entering, leaving, m, lo, frac, out);
    case 3: return slideInRegisters<T, Lanes, 3>(values, n, entering, leaving, m, lo, frac, out);
    case 4: return slideInRegisters<T, Lanes, 4>(values, n, entering, leaving, m, lo, frac, out);
    case 5: return slideInRegisters<T, Lanes, 5>(values, n, entering, leaving, m, lo, frac, out);
    default: return slideInRegisters<T, Lanes, 6>(values, n, entering, leaving, m, lo, frac, out);
  }
}

}  // namespace

ARGUS_AVX2_CLONES void slideQuantiles(int64_t* values, size_t n, const int64_t* entering, const int64_t* leaving, size_t m, size_t lo, double frac,
                                      double* out) {
  slideQuantilesIn<int64_t, IntLanes>(values, n, entering, leaving, m, lo, frac, out);
}

ARGUS_AVX2_CLONES void slideQuantiles(double* values, size_t n, const double* entering, const double* leaving, size_t m, size_t lo, double frac,
                                      double* out) {
  slideQuantilesIn<double, DoubleLanes>(values, n, entering, leaving, m, lo, frac, out);
}

ARGUS_AVX2_CLONES void slideSmall(int64_t* values, size_t n, int64_t x, int64_t y) { slideIn<int64_t, IntLanes>(values, n, x, y); }

ARGUS_AVX2_CLONES void slideSmall(double* values, size_t n, double x, double y) { slideIn<double, DoubleLanes>(values, n, x, y); }

}  // namespace argus::query
