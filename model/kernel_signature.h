// Kernel signature: xxHash3-64 of the normalized kernel name plus launch geometry.
// Normalization makes the same kernel hash the same across runs and ranks: leading and
// trailing spaces trimmed, runs of whitespace folded to one space. Template arguments and
// parameter lists are kept: they distinguish real kernel variants.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace argus::model {

struct LaunchGeometry {
  uint32_t grid_x = 0, grid_y = 0, grid_z = 0;
  uint32_t block_x = 0, block_y = 0, block_z = 0;
  bool operator==(const LaunchGeometry&) const = default;
};

std::string normalizeKernelName(std::string_view name);

// Hashes normalizeKernelName(name) followed by the six geometry fields as little-endian u32.
uint64_t kernelSignature(std::string_view name, const LaunchGeometry& geometry);

}  // namespace argus::model
