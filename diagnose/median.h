// medianOf: the median of a few values (a window's steps, a baseline), the mean of the two
// middle ones for an even count; 0 for none. Reorders `values`.
#pragma once

#include <algorithm>
#include <vector>

#include "base/small_select.h"

namespace argus::diagnose {

template <typename T>
double medianOf(std::vector<T>& values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  selectSmall(values.data(), values.size(), mid);
  double m = static_cast<double>(values[mid]);
  if (values.size() % 2 == 0) m = (m + static_cast<double>(*std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid)))) / 2;
  return m;
}

}  // namespace argus::diagnose
