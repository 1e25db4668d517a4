#include "query/execution/sliding_order_stat.h"

#include <cstring>
#include <type_traits>

#include "base/cpu_clones.h"

namespace argus::query {
namespace {

using IntLanes = int64_t __attribute__((vector_size(32)));
using DoubleLanes = double __attribute__((vector_size(32)));

// A true lane compares to -1: the masks' sums count down.
size_t negatedSum(const IntLanes& masks) { return static_cast<size_t>(-(masks[0] + masks[1] + masks[2] + masks[3])); }

// x's place counts the values below x, y's those not above y. NaN sorts above every number:
// below a NaN x lie all numbers, and every value is not above a NaN y; a NaN value compares
// false to any x or y, as its place wants. Inlined into each CPU's clone of its caller.
template <typename T, typename Lanes>
[[gnu::always_inline]] inline SlidePlaces countPlacesIn(const T* values, size_t n, T x, T y) {
  constexpr bool kNaN = std::is_floating_point_v<T>;
  const int64_t x_nan = kNaN && x != x ? -1 : 0, y_nan = kNaN && y != y ? -1 : 0;
  const Lanes xs = {x, x, x, x}, ys = {y, y, y, y};
  const IntLanes x_nans = {x_nan, x_nan, x_nan, x_nan}, y_nans = {y_nan, y_nan, y_nan, y_nan};
  IntLanes below = {}, upto = {};
  size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    Lanes v;
    std::memcpy(&v, values + k, sizeof v);
    if constexpr (kNaN) {
      below += (v < xs) | (x_nans & (v == v));
      upto += (v <= ys) | y_nans;
    } else {
      below += v < xs;
      upto += v <= ys;
    }
  }
  SlidePlaces p{negatedSum(below), negatedSum(upto)};
  for (; k < n; ++k) {
    const T v = values[k];
    p.below_x += v < x || (x_nan != 0 && v == v);
    p.upto_y += v <= y || y_nan != 0;
  }
  return p;
}

}  // namespace

ARGUS_AVX2_CLONES SlidePlaces countPlaces(const int64_t* values, size_t n, int64_t x, int64_t y) {
  return countPlacesIn<int64_t, IntLanes>(values, n, x, y);
}

ARGUS_AVX2_CLONES SlidePlaces countPlaces(const double* values, size_t n, double x, double y) {
  return countPlacesIn<double, DoubleLanes>(values, n, x, y);
}

}  // namespace argus::query
