#include "cli/text_chart.h"

#include <algorithm>
#include <cmath>

namespace argus::cli {

size_t columnRun(size_t count, size_t width) { return count <= width ? 1 : (count + width - 1) / width; }

std::vector<double> foldColumns(std::span<const double> values, size_t width, Fold fold) {
  std::vector<double> out;
  if (values.empty() || width == 0) return out;
  const size_t run = columnRun(values.size(), width);
  for (size_t at = 0; at < values.size(); at += run) {
    std::span<const double> part = values.subspan(at, std::min(run, values.size() - at));
    double v = part[0];
    for (double x : part.subspan(1)) v = fold == Fold::kMax ? std::max(v, x) : v + x;
    out.push_back(fold == Fold::kMax ? v : v / static_cast<double>(part.size()));
  }
  return out;
}

std::string sparkline(std::span<const double> values, double lo, double hi) {
  static const char* const kBlocks[] = {"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};
  constexpr int kLevels = 8;
  std::string out;
  for (double v : values) {
    int level = 0;
    if (hi > lo && std::isfinite(v)) level = std::clamp(static_cast<int>(std::lround((v - lo) / (hi - lo) * (kLevels - 1))), 0, kLevels - 1);
    out += kBlocks[level];
  }
  return out;
}

}  // namespace argus::cli
