// StepPeriodDetector: finds training steps in a kernel stream that carries no step markers
// (docs/capture/step-assembler.md, "Inferred steps").
//
// Idea: a training iteration launches the same kernel sequence every time, and some
// kernels occur exactly once per iteration (loss, optimizer, embedding update ...). In a
// learning window of kernels (in device order), a signature whose occurrences are evenly
// spaced, in kernel counts, within `tolerance` of their median spacing and seen at least
// `min_repeats` times, is a candidate with that spacing as its period. Per-layer kernels
// fail the test (the spacing jumps at iteration edges). The step period P is the spacing
// shared by the most candidates (ties: the longer). The anchor, the kernel that starts a
// step, is the candidate with period P whose occurrences follow the largest mean device
// idle gap (iterations are separated by host syncs that leave the GPU idle); ties prefer
// the kernel right after an optimizer-class kernel, then the earliest.
//
// Runs detection at a few checkpoints (window sizes 64, 128, ...), so its cost is
// amortized; it allocates while learning (not the steady-state path). Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace argus::capture {

struct PeriodDetectorOptions {
  size_t window_kernels = 1 << 16;  // give up (and start over) after this many kernels
  int min_repeats = 3;              // occurrences of the anchor (>= 2 full periods)
  double tolerance = 0.1;           // allowed relative deviation of a spacing from the median
};

class StepPeriodDetector {
 public:
  explicit StepPeriodDetector(PeriodDetectorOptions options = {}) : options_(options) {}

  // Feeds the next kernel in device order. `gap_before_ns`: device idle time just before it
  // (0 when it overlaps earlier work); `optimizer`: its name classifies as optimizer.
  // Returns true when this call found the period (found() is then true).
  bool add(uint64_t signature, int64_t start_ns, int64_t gap_before_ns, bool optimizer);
  // Forgets everything (a new learning window).
  void reset();

  bool found() const { return found_; }
  bool windowFull() const { return seq_.size() >= options_.window_kernels; }
  // Valid once found(): the anchor signature, the period in kernels, and the start times
  // of the anchor's occurrences in the learning window (each starts a step).
  uint64_t anchor() const { return anchor_; }
  size_t periodKernels() const { return period_; }
  const std::vector<int64_t>& anchorStarts() const { return anchor_starts_; }

 private:
  struct Obs {
    uint64_t signature;
    int64_t start_ns;
    int64_t gap_ns;
    bool optimizer;
  };
  bool detect();

  PeriodDetectorOptions options_;
  std::vector<Obs> seq_;
  size_t next_check_ = 64;
  bool found_ = false;
  uint64_t anchor_ = 0;
  size_t period_ = 0;
  std::vector<int64_t> anchor_starts_;
};

}  // namespace argus::capture
