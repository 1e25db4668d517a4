// The kernel dictionary names are model::normalizeKernelName's, whatever the whitespace: the
// assembler copies names that are normalized already (almost all) and normalizes the rest.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "capture/step_assembler.h"
#include "event_stream.h"

using namespace argus::capture;
using namespace argus::capture::testing;

TEST_CASE("dictionary names equal normalizeKernelName for any whitespace, at any offset") {
  std::vector<std::string> names = {"gemm", " lead", "trail ", "a  b", "a\tb", "a \nb", "x\vy", "f\rg", "\f",
                                    "void at::native::kernel<float, 4>(int, float)", "void  at::native::kernel<float,  4>(int)"};
  // Two spaces, a tab and a trailing space around every 8-byte boundary.
  for (size_t at = 0; at < 20; ++at) {
    names.push_back(std::string(at, 'k') + "  x" + std::string(20 - at, 'y'));
    names.push_back(std::string(at, 'k') + " \tx" + std::string(20 - at, 'y'));
    names.push_back(std::string(at, 'k') + " x" + std::string(20 - at, 'y'));
    names.push_back(std::string(at + 1, 'k') + " ");
  }
  EventStream s;
  s.range("ProfilerStep#1", 0, 1'000'000);
  int64_t t = 100;
  for (const std::string& n : names) {
    s.kernel(n, t, t + 10);
    t += 100;
  }
  Collected c;
  REQUIRE(assemble(s, &c).size() == 1);
  for (const std::string& n : names) {
    CAPTURE(n);
    uint64_t sig = s.sig(n);
    bool found = false;
    for (const auto& k : c.kernels) {
      if (k.signature != sig) continue;
      found = true;
      CHECK(k.name == argus::model::normalizeKernelName(n));
    }
    CHECK(found);
  }
}
