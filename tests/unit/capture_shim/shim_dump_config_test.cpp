// The flight recorder's configuration (docs/capture/shim.md, "Flight recorder"):
// ARGUS_FLIGHT_RECORDER_MB, ARGUS_FLIGHT_RECORDER_STEPS, ARGUS_DUMP_DIR.
#include <doctest/doctest.h>
#include <unistd.h>

#include <map>
#include <string>

#include "capture/shim/shim_config.h"
#include "config_env.h"

using namespace argus::capture::shim;

namespace {

ShimConfig read(const std::map<std::string, std::string>& env, std::string* warnings) { return testing::readFromEnv(env, warnings); }

}  // namespace

TEST_CASE("flight recorder: 16 MiB and 8 steps by default, 0 MiB is off; bad values fall back with one warning") {
  std::string w;
  ShimConfig d = read({}, &w);
  CHECK(d.flight_recorder_bytes == size_t{16} << 20);
  CHECK(d.flight_recorder_steps == 8);
  CHECK(read({{"ARGUS_FLIGHT_RECORDER_MB", "0"}}, &w).flight_recorder_bytes == 0);
  CHECK(read({{"ARGUS_FLIGHT_RECORDER_MB", "256"}}, &w).flight_recorder_bytes == size_t{256} << 20);
  CHECK(read({{"ARGUS_FLIGHT_RECORDER_STEPS", "32"}}, &w).flight_recorder_steps == 32);
  CHECK(w.empty());
  for (const char* bad : {"-1", "65537", "lots", "16MB"}) {
    std::string warn;
    CHECK(read({{"ARGUS_FLIGHT_RECORDER_MB", bad}}, &warn).flight_recorder_bytes == size_t{16} << 20);
    CHECK(warn.find("ARGUS_FLIGHT_RECORDER_MB") != std::string::npos);
  }
  for (const char* bad : {"0", "-3", "many"}) {
    std::string warn;
    CHECK(read({{"ARGUS_FLIGHT_RECORDER_STEPS", bad}}, &warn).flight_recorder_steps == 8);
    CHECK(warn.find("ARGUS_FLIGHT_RECORDER_STEPS") != std::string::npos);
  }
}

TEST_CASE("ARGUS_DUMP_DIR: as given, else the working directory (next to the job)") {
  std::string w;
  CHECK(read({{"ARGUS_DUMP_DIR", "/scratch/dumps"}}, &w).dump_dir == "/scratch/dumps");
  char cwd[4096];
  REQUIRE(::getcwd(cwd, sizeof cwd) != nullptr);
  CHECK(read({}, &w).dump_dir == cwd);
  CHECK(read({{"ARGUS_DUMP_DIR", ""}}, &w).dump_dir == cwd);  // empty is unset
  CHECK(w.empty());
}
