#include "capture/step_period_detector.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace argus::capture {

void StepPeriodDetector::reset() {
  seq_.clear();
  next_check_ = 64;
  found_ = false;
  anchor_ = 0;
  period_ = 0;
  anchor_starts_.clear();
}

bool StepPeriodDetector::add(uint64_t signature, int64_t start_ns, int64_t gap_before_ns, bool optimizer) {
  if (found_ || windowFull()) return false;
  seq_.push_back({signature, start_ns, gap_before_ns < 0 ? 0 : gap_before_ns, optimizer});
  if (seq_.size() < next_check_ && !windowFull()) return false;
  next_check_ = seq_.size() * 2;
  found_ = detect();
  return found_;
}

bool StepPeriodDetector::detect() {
  // Positions of every signature, grouped: sort (signature, position) pairs.
  std::vector<std::pair<uint64_t, uint32_t>> pos;
  pos.reserve(seq_.size());
  for (size_t i = 0; i < seq_.size(); ++i) pos.emplace_back(seq_[i].signature, static_cast<uint32_t>(i));
  std::sort(pos.begin(), pos.end());

  struct Candidate {
    uint64_t signature;
    size_t period;
    size_t first, last;  // range in pos
  };
  std::vector<Candidate> candidates;
  std::vector<size_t> gaps;
  for (size_t i = 0; i < pos.size();) {
    size_t j = i;
    while (j < pos.size() && pos[j].first == pos[i].first) ++j;
    if (j - i >= static_cast<size_t>(std::max(options_.min_repeats, 2))) {
      gaps.clear();
      for (size_t k = i + 1; k < j; ++k) gaps.push_back(pos[k].second - pos[k - 1].second);
      std::vector<size_t> sorted = gaps;
      std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
      size_t median = sorted[sorted.size() / 2];
      double slack = options_.tolerance * static_cast<double>(median);
      bool even = median >= 2 && std::all_of(gaps.begin(), gaps.end(), [&](size_t g) {
        return std::fabs(static_cast<double>(g) - static_cast<double>(median)) <= slack;
      });
      if (even) candidates.push_back({pos[i].first, median, i, j});
    }
    i = j;
  }
  if (candidates.empty()) return false;

  // The period shared by the most candidates; ties: the longer.
  std::map<size_t, size_t> votes;
  for (const Candidate& c : candidates) ++votes[c.period];
  size_t period = 0, best_votes = 0;
  for (const auto& [p, v] : votes) {
    if (v >= best_votes) period = p, best_votes = v;
  }

  // The anchor: largest mean idle gap before it, then "follows an optimizer kernel", then earliest.
  const Candidate* best = nullptr;
  double best_gap = -1;
  bool best_after_opt = false;
  uint32_t best_first = 0;
  for (const Candidate& c : candidates) {
    if (c.period != period) continue;
    double gap = 0;
    size_t after_opt = 0;
    for (size_t k = c.first; k < c.last; ++k) {
      uint32_t p = pos[k].second;
      gap += static_cast<double>(seq_[p].gap_ns);
      if (p > 0 && seq_[p - 1].optimizer && !seq_[p].optimizer) ++after_opt;
    }
    gap /= static_cast<double>(c.last - c.first);
    bool is_after_opt = after_opt * 2 > c.last - c.first;
    uint32_t first = pos[c.first].second;
    bool better = best == nullptr || gap > best_gap ||
                  (gap == best_gap && (is_after_opt > best_after_opt || (is_after_opt == best_after_opt && first < best_first)));
    if (better) best = &c, best_gap = gap, best_after_opt = is_after_opt, best_first = first;
  }
  anchor_ = best->signature;
  period_ = period;
  anchor_starts_.clear();
  for (size_t k = best->first; k < best->last; ++k) anchor_starts_.push_back(seq_[pos[k].second].start_ns);
  std::sort(anchor_starts_.begin(), anchor_starts_.end());
  return true;
}

}  // namespace argus::capture
