// ARGUS_NCCL_SAMPLE: the NCCL plugin's proxy-event sampling period (docs/capture/nccl.md).
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "capture/shim/shim_config.h"
#include "config_env.h"

using namespace argus::capture::shim;

namespace {

ShimConfig read(const std::map<std::string, std::string>& env, std::string* warnings) { return testing::readFromEnv(env, warnings); }

}  // namespace

TEST_CASE("ARGUS_NCCL_SAMPLE: default 16, 0 (none) to 65536; bad values fall back with one warning") {
  std::string w;
  CHECK(read({}, &w).nccl_sample_period == 16);
  CHECK(read({{"ARGUS_NCCL_SAMPLE", "1"}}, &w).nccl_sample_period == 1);
  CHECK(read({{"ARGUS_NCCL_SAMPLE", "0"}}, &w).nccl_sample_period == 0);
  CHECK(read({{"ARGUS_NCCL_SAMPLE", "65536"}}, &w).nccl_sample_period == 65536);
  CHECK(w.empty());
  for (const char* bad : {"65537", "-1", "x", "8 "}) {
    std::string warn;
    CHECK(read({{"ARGUS_NCCL_SAMPLE", bad}}, &warn).nccl_sample_period == 16);
    CHECK(warn.find("ARGUS_NCCL_SAMPLE") != std::string::npos);
  }
}
