// ARGUS_STACK_HZ: the CPU stack sampler's rate (docs/capture/stacks.md, "Configuration").
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "capture/shim/shim_config.h"
#include "config_env.h"

using namespace argus::capture::shim;

namespace {

ShimConfig read(const std::map<std::string, std::string>& env, std::string* warnings) { return testing::readFromEnv(env, warnings); }

}  // namespace

TEST_CASE("ARGUS_STACK_HZ: default 50, 0 (off) to 1000; bad values fall back with one warning") {
  std::string w;
  CHECK(read({}, &w).stack_hz == 50);
  CHECK(read({{"ARGUS_STACK_HZ", "0"}}, &w).stack_hz == 0);
  CHECK(read({{"ARGUS_STACK_HZ", "100"}}, &w).stack_hz == 100);
  CHECK(read({{"ARGUS_STACK_HZ", "1000"}}, &w).stack_hz == 1000);
  CHECK(read({{"ARGUS_STACK_HZ", ""}}, &w).stack_hz == 50);  // empty is unset
  CHECK(w.empty());
  for (const char* bad : {"1001", "-1", "fast", "50hz", " 50"}) {
    std::string warn;
    CHECK(read({{"ARGUS_STACK_HZ", bad}}, &warn).stack_hz == 50);
    CHECK(warn.find("ARGUS_STACK_HZ") != std::string::npos);
  }
}
