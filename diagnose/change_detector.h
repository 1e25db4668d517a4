// ChangeDetector: online, robust detection of anomalous windows in a step-time series
// (DESIGN §7 stage 1). Steps are fed in order; each is judged against a baseline of the
// last `baseline_steps` normal steps before it (their median and median absolute
// deviation), so a decision at step s uses steps <= s only: fit for continuous mode.
//
// - Robust: median and MAD ignore the outliers among the baseline; the scale has a floor
//   (`noise_floor` of the median), so a very steady job does not alarm on 0.1% jitter.
// - Warm-up: steps before `warmup_steps` are neither judged nor baseline.
// - Periodic spikes: a step flagged expected (a checkpoint or evaluation marker) is neither
//   judged nor baseline; an isolated unflagged spike shorter than `min_steps` is ignored.
// - A window opens once `min_steps` consecutive steps are anomalous (robust z-score above
//   `threshold` and slower than the baseline by `min_slowdown`), at the first of them, and
//   closes after `end_steps` normal steps, at the last anomalous one. The baseline is frozen
//   while a window is open, so a long slowdown never becomes the new normal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace argus::diagnose {

struct DetectorOptions {
  uint32_t baseline_steps = 50;
  uint32_t min_baseline = 10;  // steps of baseline before anything is judged
  double threshold = 6;        // robust z-score: (x - median) / (1.4826 * MAD)
  double min_slowdown = 0.03;  // and at least 3% slower than the median
  double noise_floor = 0.003;  // the scale is at least 0.3% of the median
  uint32_t min_steps = 2;
  uint32_t end_steps = 3;
  uint64_t warmup_steps = 20;  // from the first step fed
};

struct AnomalyWindow {
  uint64_t from_step = 0, to_step = 0;  // inclusive; anomalous steps
  double baseline = 0;                  // the baseline median when it opened
  double slowdown = 0;                  // median of the window's anomalous steps / baseline - 1
  double peak_z = 0;                    // the largest robust z-score in it
  uint32_t anomalous_steps = 0;
  bool open = false;                    // still going at the last step fed
  double confidence() const;            // 0..1, from length and strength
};

class ChangeDetector {
 public:
  explicit ChangeDetector(DetectorOptions options = {});

  // Feeds the next step (steps ascend; gaps are fine). `expected`: a known spike. A negative
  // value is no measurement and is not fed.
  void add(uint64_t step, double value, bool expected = false);
  // Closed windows, then the open one (if any) with open = true.
  std::vector<AnomalyWindow> windows() const;
  // The robust z-score and slowdown of the last step fed (0 when not judged).
  double lastZ() const { return last_z_; }

 private:
  bool judge(double value, double* z, double* median) const;
  void closeWindow();

  DetectorOptions o_;
  std::vector<double> baseline_;  // ring of the last normal values
  size_t next_slot_ = 0;
  bool started_ = false;
  uint64_t first_step_ = 0;
  // The current run of anomalous steps, and the window it opened (if it did).
  bool in_window_ = false;
  AnomalyWindow current_;
  std::vector<double> current_values_;
  uint32_t run_ = 0, normal_run_ = 0;
  uint64_t run_start_ = 0;
  double last_z_ = 0;
  std::vector<AnomalyWindow> closed_;
};

}  // namespace argus::diagnose
