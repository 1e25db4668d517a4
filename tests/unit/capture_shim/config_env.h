// readShimConfig over a map standing in for the process environment: what the shim's
// configuration tests read their settings from.
#pragma once

#include <map>
#include <string>

#include "capture/shim/shim_config.h"

namespace argus::capture::shim::testing {

inline ShimConfig readFromEnv(const std::map<std::string, std::string>& env, std::string* warnings) {
  return readShimConfig(
      [&](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      warnings);
}

}  // namespace argus::capture::shim::testing
