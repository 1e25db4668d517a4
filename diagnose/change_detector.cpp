#include "diagnose/change_detector.h"

#include <algorithm>
#include <cmath>

#include "diagnose/median.h"

namespace argus::diagnose {

double AnomalyWindow::confidence() const {
  // Longer and stronger is surer: three steps at twice the threshold give ~0.9.
  const double length = 1 - std::exp(-static_cast<double>(anomalous_steps) / 1.5);
  const double strength = std::min(1.0, peak_z / 12);
  return std::clamp(length * (0.5 + 0.5 * strength), 0.0, 0.99);
}

ChangeDetector::ChangeDetector(DetectorOptions options) : o_(options) { baseline_.reserve(o_.baseline_steps); }

bool ChangeDetector::judge(double value, double* z, double* median) const {
  std::vector<double> values = baseline_;
  *median = medianOf(values);
  std::vector<double> dev(baseline_.size());
  for (size_t i = 0; i < baseline_.size(); ++i) dev[i] = std::abs(baseline_[i] - *median);
  const double scale = std::max(1.4826 * medianOf(dev), o_.noise_floor * std::abs(*median));
  *z = scale > 0 ? (value - *median) / scale : 0;
  return *z > o_.threshold && value > *median * (1 + o_.min_slowdown);
}

void ChangeDetector::add(uint64_t step, double value, bool expected) {
  if (value < 0) return;  // no measurement: -1 is a column that blocks stored before it lack
  last_z_ = 0;
  if (!started_) {
    started_ = true;
    first_step_ = step;
  }
  if (expected || step - first_step_ < o_.warmup_steps || !std::isfinite(value)) return;
  if (baseline_.size() < o_.min_baseline) {
    baseline_.push_back(value);
    return;
  }
  double z = 0, median = 0;
  const bool anomalous = judge(value, &z, &median);
  last_z_ = z;
  if (anomalous) {
    if (run_ == 0) {
      run_start_ = step;
      if (!in_window_) current_values_.clear();
    }
    ++run_;
    normal_run_ = 0;
    current_values_.push_back(value);
    if (!in_window_ && run_ >= o_.min_steps) {
      in_window_ = true;
      current_ = AnomalyWindow{};
      current_.from_step = run_start_;
      current_.baseline = median;
    }
    if (in_window_) {
      current_.to_step = step;
      current_.peak_z = std::max(current_.peak_z, z);
      current_.anomalous_steps = static_cast<uint32_t>(current_values_.size());
    }
    return;
  }
  run_ = 0;
  if (in_window_) {
    if (++normal_run_ >= o_.end_steps) closeWindow();
    return;  // the baseline stays frozen until the window closes
  }
  current_values_.clear();  // a spike too short for a window
  if (baseline_.size() < o_.baseline_steps) {
    baseline_.push_back(value);
  } else {
    baseline_[next_slot_] = value;
    next_slot_ = (next_slot_ + 1) % o_.baseline_steps;
  }
}

void ChangeDetector::closeWindow() {
  std::vector<double> values = current_values_;
  current_.slowdown = medianOf(values) / current_.baseline - 1;
  closed_.push_back(current_);
  in_window_ = false;
  normal_run_ = 0;
  current_values_.clear();
}

std::vector<AnomalyWindow> ChangeDetector::windows() const {
  std::vector<AnomalyWindow> out = closed_;
  if (in_window_) {
    AnomalyWindow w = current_;
    std::vector<double> values = current_values_;
    w.slowdown = medianOf(values) / w.baseline - 1;
    w.open = true;
    out.push_back(w);
  }
  return out;
}

}  // namespace argus::diagnose
