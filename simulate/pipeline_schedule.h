// PipelineSchedule: when each stage of one pipeline replica finishes its step under the
// 1F1B schedule (PipeDream-Flush, Megatron-LM's default without interleaving).
//
// Stage k runs min(P - k - 1, M) forward passes to fill the pipeline, then alternates one
// forward and one backward, then drains the remaining backwards. Forward j on stage k needs
// forward j of stage k - 1 plus the transfer between them; backward j needs backward j of
// stage k + 1 plus the transfer (the last stage: its own forward j). A stage runs one pass
// at a time, in its order, as soon as its input is there. Reused across steps: no
// allocation after construction.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace argus::simulate {

class PipelineSchedule {
 public:
  PipelineSchedule(uint32_t stages, uint32_t microbatches);

  // Per stage: forward and backward time of one microbatch, when the stage can start, and
  // the transfer time to the next stage (either way; the last stage's is unused). All ns.
  void run(const int64_t* forward_ns, const int64_t* backward_ns, const int64_t* ready_ns, const int64_t* transfer_ns);
  // When stage k's last backward ends, after run().
  int64_t stageEnd(uint32_t k) const { return free_[k]; }
  // When forward / backward j of stage k ends, after run().
  int64_t forwardEnd(uint32_t k, uint32_t j) const { return fwd_end_[k * m_ + j]; }
  int64_t backwardEnd(uint32_t k, uint32_t j) const { return bwd_end_[k * m_ + j]; }

 private:
  // Stage k's n-th pass: (is it a forward, which microbatch).
  std::pair<bool, uint32_t> pass(uint32_t k, uint32_t n) const;

  uint32_t p_, m_;
  std::vector<int64_t> fwd_end_, bwd_end_;  // [k * m + j], -1 not yet run
  std::vector<int64_t> free_;               // when the stage is next free
  std::vector<uint32_t> next_;              // the stage's next pass
};

}  // namespace argus::simulate
