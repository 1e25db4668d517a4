#include "model/kernel_signature.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <string>

using argus::model::kernelSignature;
using argus::model::LaunchGeometry;
using argus::model::normalizeKernelName;

TEST_CASE("normalizeKernelName trims and folds whitespace runs") {
  CHECK(normalizeKernelName("") == "");
  CHECK(normalizeKernelName("   ") == "");
  CHECK(normalizeKernelName("ampere_sgemm_128x64_nn") == "ampere_sgemm_128x64_nn");
  CHECK(normalizeKernelName("  void  foo<4,\t\n int>(float*)  ") == "void foo<4, int>(float*)");
  CHECK(normalizeKernelName("a \r\n\t\f\v b") == "a b");
}

TEST_CASE("kernelSignature is stable: pinned known values") {
  LaunchGeometry g{108, 1, 1, 256, 1, 1};
  uint64_t sig = kernelSignature("ampere_sgemm_128x64_nn", g);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(sig));
  // Pinned: a change here changes every stored signature. Do not update casually.
  CHECK(std::string(hex) == "f92bdba3180f75c3");
  uint64_t empty = kernelSignature("", LaunchGeometry{});
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(empty));
  CHECK(std::string(hex) == "743df94ee4c78a2a");
}

TEST_CASE("kernelSignature: normalization-equivalent names agree; geometry matters") {
  LaunchGeometry g{80, 2, 1, 128, 1, 1};
  CHECK(kernelSignature("void k<int>( float* )", g) == kernelSignature("  void  k<int>(\tfloat* ) ", g));
  CHECK(kernelSignature("void k<int>(float*)", g) != kernelSignature("void k<long>(float*)", g));
  uint32_t LaunchGeometry::*fields[] = {&LaunchGeometry::grid_x,  &LaunchGeometry::grid_y,  &LaunchGeometry::grid_z,
                                         &LaunchGeometry::block_x, &LaunchGeometry::block_y, &LaunchGeometry::block_z};
  for (auto field : fields) {
    LaunchGeometry h = g;
    h.*field += 1;
    CHECK(kernelSignature("k", h) != kernelSignature("k", g));
  }
  // Swapping grid and block must not collide (order of fields is hashed).
  CHECK(kernelSignature("k", LaunchGeometry{1, 1, 1, 2, 1, 1}) != kernelSignature("k", LaunchGeometry{2, 1, 1, 1, 1, 1}));
}
