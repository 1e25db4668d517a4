#include "query/common/suggestion.h"

#include <algorithm>

namespace argus::query {

namespace {

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::string suggestion(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  size_t best_d = std::max<size_t>(2, name.size() / 3) + 1;
  for (const std::string& c : candidates) {
    size_t d = editDistance(name, c);
    if (c.starts_with(name) && name.size() >= 3) d = std::min<size_t>(d, 1);
    if (d < best_d) {
      best_d = d;
      best = &c;
    }
  }
  return best ? "; did you mean '" + *best + "'?" : "";
}

}  // namespace argus::query
