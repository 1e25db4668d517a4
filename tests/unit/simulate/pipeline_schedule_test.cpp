// The 1F1B schedule's timing against the closed forms for equal stages.
#include "simulate/pipeline_schedule.h"

#include <doctest/doctest.h>

#include <vector>

using argus::simulate::PipelineSchedule;

TEST_CASE("equal stages: the step takes (M + P - 1) * (F + B), and stage k ends k backwards early") {
  for (uint32_t p : {1u, 2u, 4u, 8u}) {
    for (uint32_t m : {1u, 4u, 8u, 16u}) {
      CAPTURE(p);
      CAPTURE(m);
      PipelineSchedule s(p, m);
      std::vector<int64_t> f(p, 10), b(p, 20), ready(p, 0), x(p, 0);
      s.run(f.data(), b.data(), ready.data(), x.data());
      CHECK(s.stageEnd(0) == int64_t{m + p - 1} * 30);
      for (uint32_t k = 0; k < p; ++k) CHECK(s.stageEnd(k) == s.stageEnd(0) - int64_t{k} * 20);
    }
  }
}

TEST_CASE("transfers and a late stage delay the passes that need them") {
  PipelineSchedule s(2, 1);
  std::vector<int64_t> f{10, 10}, b{20, 20}, ready{0, 100}, x{5, 0};
  s.run(f.data(), b.data(), ready.data(), x.data());
  CHECK(s.forwardEnd(0, 0) == 10);
  CHECK(s.forwardEnd(1, 0) == 110);   // stage 1 ready at 100, after the activation (15)
  CHECK(s.backwardEnd(1, 0) == 130);
  CHECK(s.backwardEnd(0, 0) == 155);  // the gradient crosses back in 5
}

TEST_CASE("a slow stage grows the other stages' idle time (the bubble)") {
  const uint32_t p = 4, m = 8;
  auto idle = [&](int64_t slow_forward) {
    PipelineSchedule s(p, m);
    std::vector<int64_t> f(p, 10), b(p, 20), ready(p, 0), x(p, 1);
    f[1] = slow_forward;
    b[1] = 2 * slow_forward;
    s.run(f.data(), b.data(), ready.data(), x.data());
    std::vector<int64_t> out;
    for (uint32_t k = 0; k < p; ++k) out.push_back(s.stageEnd(k) - m * (f[k] + b[k]));
    return out;
  };
  std::vector<int64_t> even = idle(10), slow = idle(15);
  for (uint32_t k = 0; k < p; ++k) {
    if (k != 1) CHECK(slow[k] > even[k] + m * 5);  // stage 1 takes m * 15 longer
  }
}
