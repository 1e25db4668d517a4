// RankPhases: the per-rank medians window analysis compares (DESIGN §7 stage 2), over a
// window of steps and the baseline before it, and RankPhasesGatherer, which turns one rank's
// rows at a time into them: the same arithmetic whether the rows are read from the store
// (JobReader) or held in memory (RecentSteps).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace argus::diagnose {

// Medians over a window's steps of one rank's phase columns (ns).
struct RankPhases {
  uint32_t steps = 0;  // steps the rank reported in the window (0: absent)
  double compute = 0, exposed = 0, bubble = 0;
  double transfer = 0;  // comm_transfer_ns; negative where a step's blocks predate the column
  double iter = 0, idle = 0;  // of the ranks asked for (rankPhases), else 0
  bool operator==(const RankPhases&) const = default;
};

// A window of steps and the baseline before it that it is compared with.
struct StepWindow {
  uint64_t from_step = 0, to_step = 0;  // the window, inclusive
  uint64_t base_from = 0, base_to = 0;  // its baseline, inclusive; base_to + 1 == from_step
  // No baseline (base_from and base_to unused): ranks are compared with their peers alone,
  // for a capture with no steps before the window (a profiler trace of a few steps).
  bool peers_only = false;
};

// Per rank (indexed by rank): its medians over a window's baseline in [0], over the window in [1].
using RankPhasesPair = std::array<std::vector<RankPhases>, 2>;

// Per window, every rank absent (steps == 0): what a read fills in.
inline std::vector<RankPhasesPair> absentRankPhases(size_t windows, uint32_t rank_count) {
  std::vector<RankPhasesPair> out(windows);
  for (RankPhasesPair& pair : out) {
    pair[0].resize(rank_count);
    pair[1].resize(rank_count);
  }
  return out;
}

// The first step a window reads (its baseline's, where it has one).
inline uint64_t firstStepOf(const StepWindow& w) { return w.peers_only ? w.from_step : w.base_from; }
// Whether `step` falls in w's baseline (0), its window (1), or neither (-1).
inline int sideOf(const StepWindow& w, uint64_t step) {
  if (!w.peers_only && step >= w.base_from && step <= w.base_to) return 0;
  return step >= w.from_step && step <= w.to_step ? 1 : -1;
}

// One rank's rows at a time: add() its values per window and side, finish() into medians.
class RankPhasesGatherer {
 public:
  // Columns of a row, in RankPhases's (and model::SummaryColumn's) order: compute, exposed,
  // bubble, transfer, and for detailed ranks iter and idle.
  static constexpr int kColumns = 6, kCoreColumns = 4;

  explicit RankPhasesGatherer(size_t windows) : values_(windows) {}
  void add(size_t window, int side, const int64_t* row, int columns) {
    auto& v = values_[window][side];
    for (int c = 0; c < columns; ++c) v[c].push_back(row[c]);
  }
  // The medians of what was added since the last finish into out[window][side][rank]; a
  // window or side with no rows leaves it absent (steps == 0).
  void finish(uint32_t rank, std::vector<RankPhasesPair>& out);

 private:
  std::vector<std::array<std::array<std::vector<int64_t>, kColumns>, 2>> values_;
};

}  // namespace argus::diagnose
