#include <doctest/doctest.h>

#include "cli/duration_text.h"

using argus::cli::formatDurationNs;
using argus::cli::parseDurationNs;

TEST_CASE("durations parse with every unit and refuse what is not a duration") {
  CHECK(*parseDurationNs("0") == 0);
  CHECK(*parseDurationNs("250ms") == 250'000'000);
  CHECK(*parseDurationNs("90m") == 5'400'000'000'000);
  CHECK(*parseDurationNs("30d") == 30 * 86'400'000'000'000);
  CHECK(*parseDurationNs("2w") == 14 * 86'400'000'000'000);
  for (const char* bad : {"", "d", "30", "30x", "-1d", "1.5h", "99999999999w"}) {
    INFO(bad);
    auto r = parseDurationNs(bad);
    CHECK_FALSE(r.isOk());
    CHECK(r.status().code() == argus::Status::Code::kInvalidArgument);
  }
}

TEST_CASE("durations format in the unit a person reads best") {
  CHECK(formatDurationNs(812) == "812 ns");
  CHECK(formatDurationNs(4400) == "4.4 us");
  CHECK(formatDurationNs(563.1e6) == "563.1 ms");
  CHECK(formatDurationNs(1.15e9) == "1.15 s");
  CHECK(formatDurationNs(7200e9) == "2.0 h");
  CHECK(formatDurationNs(30 * 86400e9) == "30.0 d");
}
