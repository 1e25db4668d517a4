// ArgusdProcess, the tests' way of starting argusd: a binary that cannot run and an argusd
// that exits during startup are clear errors, returned at once rather than after the
// startup timeout.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>

#include "cli/argusd_process.h"

using namespace argus;

TEST_CASE("ArgusdProcess: a missing binary is an error naming it") {
  const char* bin = std::getenv("ARGUSD_BIN");
  const std::optional<std::string> saved = bin != nullptr ? std::optional<std::string>(bin) : std::nullopt;
  ::setenv("ARGUSD_BIN", "/nonexistent/argusd", 1);
  cli::ArgusdProcess argusd;
  const auto t0 = std::chrono::steady_clock::now();
  Status s = argusd.start();
  if (saved) {
    ::setenv("ARGUSD_BIN", saved->c_str(), 1);
  } else {
    ::unsetenv("ARGUSD_BIN");  // as it was: unset, not set empty
  }
  REQUIRE_FALSE(s.isOk());
  CHECK(s.message().find("cannot run /nonexistent/argusd") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
}

TEST_CASE("ArgusdProcess: an argusd that exits during startup is an error with its stderr") {
  cli::ArgusdProcess argusd;
  argusd.setArgs({"--block-steps", "3"});
  Status s = argusd.start();
  REQUIRE_FALSE(s.isOk());
  CHECK(s.message().find("argusd exited during startup") != std::string::npos);
  CHECK(s.message().find("--block-steps must be a power of two") != std::string::npos);
}
