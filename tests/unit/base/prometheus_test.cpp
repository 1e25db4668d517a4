#include "base/prometheus.h"

#include <doctest/doctest.h>

using namespace argus;

TEST_CASE("a label value is escaped as the text format asks: backslash, quote and newline") {
  CHECK(prometheus::label("job", "llama-70b") == "job=\"llama-70b\"");
  CHECK(prometheus::label("job", "a\\b\"c\nd") == "job=\"a\\\\b\\\"c\\nd\"");
  std::string out;
  prometheus::sample(&out, "m", prometheus::label("job", "x\"y"), 3);
  CHECK(out == "m{job=\"x\\\"y\"} 3\n");
}
