#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli/text_chart.h"

using namespace argus::cli;

TEST_CASE("sparkline: one block per value, linear over [lo, hi], clamped outside") {
  std::vector<double> v{0, 1, 2, 3, 4, 5, 6, 7, -3, 99};
  CHECK(sparkline(v, 0, 7) == "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588\u2581\u2588");
  std::string lowest;
  for (size_t i = 0; i < v.size(); ++i) lowest += "\u2581";
  CHECK(sparkline(v, 5, 5) == lowest);  // no range: every value the lowest block
  CHECK(sparkline({}, 0, 1).empty());
}

TEST_CASE("foldColumns: at most `width` columns, each the max or the mean of its run") {
  std::vector<double> v{1, 5, 2, 2, 9, 1, 4};
  CHECK(foldColumns(v, 10, Fold::kMax) == v);  // fits: unchanged
  CHECK(foldColumns(v, 3, Fold::kMax) == std::vector<double>{5, 9, 4});  // runs of 3: {1,5,2} {2,9,1} {4}
  CHECK(foldColumns(v, 3, Fold::kMean) == std::vector<double>{8.0 / 3, 4, 4});
  CHECK(columnRun(7, 3) == 3);
  CHECK(columnRun(7, 10) == 1);
  CHECK(foldColumns(v, 0, Fold::kMax).empty());
  CHECK(foldColumns({}, 5, Fold::kMean).empty());
}
