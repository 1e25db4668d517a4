#include "simulate/pipeline_schedule.h"

#include <algorithm>
#include <cassert>

namespace argus::simulate {

PipelineSchedule::PipelineSchedule(uint32_t stages, uint32_t microbatches)
    : p_(stages), m_(microbatches), fwd_end_(static_cast<size_t>(stages) * microbatches), bwd_end_(fwd_end_.size()), free_(stages), next_(stages) {}

std::pair<bool, uint32_t> PipelineSchedule::pass(uint32_t k, uint32_t n) const {
  const uint32_t warm = std::min(p_ - k - 1, m_);
  if (n < warm) return {true, n};
  const uint32_t q = n - warm, steady = 2 * (m_ - warm);
  if (q < steady) return q % 2 == 0 ? std::pair{true, warm + q / 2} : std::pair{false, q / 2};
  return {false, m_ - warm + (q - steady)};
}

void PipelineSchedule::run(const int64_t* forward_ns, const int64_t* backward_ns, const int64_t* ready_ns, const int64_t* transfer_ns) {
  std::fill(fwd_end_.begin(), fwd_end_.end(), -1);
  std::fill(bwd_end_.begin(), bwd_end_.end(), -1);
  std::fill(next_.begin(), next_.end(), 0);
  std::copy(ready_ns, ready_ns + p_, free_.begin());
  // Sweep the stages, running every pass whose input is there, until all have run. 1F1B
  // never deadlocks, so every sweep runs at least one pass.
  for (uint32_t done = 0; done < 2 * p_ * m_;) {
    [[maybe_unused]] const uint32_t before = done;
    for (uint32_t k = 0; k < p_; ++k) {
      for (; next_[k] < 2 * m_; ++next_[k], ++done) {
        const auto [forward, j] = pass(k, next_[k]);
        int64_t input = 0;
        if (forward) {
          input = k == 0 ? 0 : fwd_end_[(k - 1) * m_ + j] < 0 ? -1 : fwd_end_[(k - 1) * m_ + j] + transfer_ns[k - 1];
        } else {
          input = k + 1 == p_ ? fwd_end_[k * m_ + j] : bwd_end_[(k + 1) * m_ + j] < 0 ? -1 : bwd_end_[(k + 1) * m_ + j] + transfer_ns[k];
        }
        if (input < 0) break;
        const int64_t end = std::max(free_[k], input) + (forward ? forward_ns[k] : backward_ns[k]);
        (forward ? fwd_end_ : bwd_end_)[k * m_ + j] = end;
        free_[k] = end;
      }
    }
    assert(done > before && "BUG: the 1F1B schedule stalled");
  }
}

}  // namespace argus::simulate
