// RecentSteps: each rank's last `depth` steps of the steps-table columns the diagnosis reads
// of every rank (model::StepSummary), as ingest told the monitor they became durable. A
// monitor pass analyzes a window from them instead of reading back and decoding every
// rank's records: at 10,240 ranks a window and its 50-step baseline are ~600,000 records,
// seconds on 2 cores (docs/query/diagnosis.md, "Continuous mode").
//
// A read is served only where every step it covers was told by at least the job's rank
// count and none has been pushed out by a newer step since; else the caller reads the
// store. A slot holds the newest step told that maps to it (step % depth): an older one told
// later (a rank far behind the others) is not kept.
//
// Memory: 64 bytes per rank and step held, so 8 MB per 1,024 ranks at depth 128; ranks from
// kMaxRanks on are not held. Not thread-safe: the monitor's pass thread owns it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "diagnose/rank_phases.h"
#include "model/step_summary.h"

namespace argus::diagnose {

class RecentSteps {
 public:
  static constexpr uint32_t kMaxRanks = 1u << 15;

  explicit RecentSteps(uint32_t depth = 128);
  void add(const model::StepSummary& s);
  // Records of steps up to `step` were told but never added (dropped on the way): those
  // steps are not held.
  void forgetThrough(uint64_t step);

  // As JobReader::rankPhases, where it holds every step of `windows` and their baselines
  // for a job of `ranks` ranks; nullopt where it does not.
  std::optional<std::vector<RankPhasesPair>> rankPhases(const std::vector<StepWindow>& windows, uint32_t rank_count, const std::vector<bool>& detailed,
                                                        uint32_t ranks) const;
  // The ranks (sorted) with an event of one of `kinds` in [from, to], where it holds those
  // steps; nullopt where it does not.
  std::optional<std::vector<uint32_t>> ranksWithEvents(const std::vector<uint8_t>& kinds, uint64_t from, uint64_t to, uint32_t ranks) const;

  // Reads served from memory, and reads it did not hold.
  uint64_t served() const { return served_; }
  uint64_t missed() const { return missed_; }

 private:
  static constexpr uint64_t kNone = UINT64_MAX;
  struct Slot {
    uint64_t step = kNone;
    std::array<int64_t, model::kSummaryColumnNames.size()> values{};
    uint32_t event_kinds = 0;
  };
  struct Told {
    uint64_t step = kNone;  // at least the step of any rank's slot at the same index
    uint32_t ranks = 0;     // ranks that told it
  };
  // Every step of [from, to] told by `ranks` ranks and still held; counts the read.
  bool holds(uint64_t from, uint64_t to, uint32_t ranks) const;

  uint32_t depth_;
  std::vector<Told> told_;               // by step % depth
  std::vector<std::vector<Slot>> slots_;  // by rank, then step % depth; empty until it tells
  std::optional<uint64_t> lost_through_;
  mutable uint64_t served_ = 0, missed_ = 0;
};

}  // namespace argus::diagnose
