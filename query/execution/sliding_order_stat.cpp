#include "query/execution/sliding_order_stat.h"

#include <cstring>

#include "base/cpu_clones.h"

namespace argus::query {
namespace {

using IntLanes = int64_t __attribute__((vector_size(32)));
using DoubleLanes = double __attribute__((vector_size(32)));

// A true lane compares to -1: the masks' sums count down.
size_t negatedSum(IntLanes masks) { return static_cast<size_t>(-(masks[0] + masks[1] + masks[2] + masks[3])); }

}  // namespace

// x's place i counts the values below x; y's j those not above y.
ARGUS_AVX2_CLONES SlidePlaces countPlaces(const int64_t* values, size_t n, int64_t x, int64_t y) {
  const IntLanes xs = {x, x, x, x}, ys = {y, y, y, y};
  IntLanes below = {}, upto = {};
  size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    IntLanes v;
    std::memcpy(&v, values + k, sizeof v);
    below += v < xs;
    upto += v <= ys;
  }
  size_t i = negatedSum(below), j = negatedSum(upto);
  for (; k < n; ++k) {
    i += values[k] < x;
    j += values[k] <= y;
  }
  return {i, j};
}

// NaN sorts above every number: below a NaN x lie all numbers, and every value is not above a
// NaN y. A NaN value compares false to any x or y, as its place wants.
ARGUS_AVX2_CLONES SlidePlaces countPlaces(const double* values, size_t n, double x, double y) {
  const int64_t x_nan = std::isnan(x) ? -1 : 0, y_nan = std::isnan(y) ? -1 : 0;
  const DoubleLanes xs = {x, x, x, x}, ys = {y, y, y, y};
  const IntLanes x_nans = {x_nan, x_nan, x_nan, x_nan}, y_nans = {y_nan, y_nan, y_nan, y_nan};
  IntLanes below = {}, upto = {};
  size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    DoubleLanes v;
    std::memcpy(&v, values + k, sizeof v);
    below += (v < xs) | (x_nans & (v == v));
    upto += (v <= ys) | y_nans;
  }
  size_t i = negatedSum(below), j = negatedSum(upto);
  for (; k < n; ++k) {
    const double v = values[k];
    i += v < x || (x_nan != 0 && v == v);
    j += v <= y || y_nan != 0;
  }
  return {i, j};
}

}  // namespace argus::query
