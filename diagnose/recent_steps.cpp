#include "diagnose/recent_steps.h"

#include <algorithm>

namespace argus::diagnose {

namespace {

// f(step) for each step of [from, to] while it returns true (to may be UINT64_MAX).
template <typename F>
void forSteps(uint64_t from, uint64_t to, F&& f) {
  for (uint64_t s = from; s <= to; ++s) {
    if (!f(s) || s == to) return;
  }
}

}  // namespace

RecentSteps::RecentSteps(uint32_t depth) : depth_(std::max(depth, 1u)), told_(depth_) {}

void RecentSteps::add(const model::StepSummary& s) {
  if (s.rank >= kMaxRanks) return;
  Told& told = told_[s.step % depth_];
  if (told.step != kNone && told.step > s.step) return;  // pushed out by a newer step already
  if (told.step != s.step) told = Told{s.step, 0};
  if (s.rank >= slots_.size()) slots_.resize(s.rank + 1);
  std::vector<Slot>& ring = slots_[s.rank];
  if (ring.empty()) ring.resize(depth_);
  Slot& slot = ring[s.step % depth_];  // older than told.step, or the same step told again
  if (slot.step != s.step) ++told.ranks;
  slot = Slot{s.step, s.values, s.event_kinds};
}

void RecentSteps::forgetThrough(uint64_t step) { lost_through_ = std::max(lost_through_.value_or(0), step); }

bool RecentSteps::holds(uint64_t from, uint64_t to, uint32_t ranks) const {
  bool held = ranks > 0 && from <= to && to - from < depth_ && (!lost_through_ || from > *lost_through_);
  if (held) {
    forSteps(from, to, [&](uint64_t s) {
      const Told& told = told_[s % depth_];
      return held = told.step == s && told.ranks >= ranks;
    });
  }
  ++(held ? served_ : missed_);
  return held;
}

std::optional<std::vector<RankPhasesPair>> RecentSteps::rankPhases(const std::vector<StepWindow>& windows, uint32_t rank_count,
                                                                   const std::vector<bool>& detailed, uint32_t ranks) const {
  if (windows.empty()) return std::vector<RankPhasesPair>{};
  uint64_t from = UINT64_MAX, to = 0;
  for (const StepWindow& w : windows) {
    from = std::min(from, firstStepOf(w));
    to = std::max(to, w.to_step);
  }
  if (!holds(from, to, ranks)) return std::nullopt;
  std::vector<RankPhasesPair> out = absentRankPhases(windows.size(), rank_count);
  RankPhasesGatherer gather(windows.size());
  const uint32_t held_ranks = static_cast<uint32_t>(std::min<size_t>(rank_count, slots_.size()));
  for (uint32_t r = 0; r < held_ranks; ++r) {
    const std::vector<Slot>& ring = slots_[r];
    if (ring.empty()) continue;
    const int columns = r < detailed.size() && detailed[r] ? RankPhasesGatherer::kColumns : RankPhasesGatherer::kCoreColumns;
    for (size_t w = 0; w < windows.size(); ++w) {
      forSteps(firstStepOf(windows[w]), windows[w].to_step, [&](uint64_t s) {
        const Slot& slot = ring[s % depth_];
        const int side = sideOf(windows[w], s);
        if (slot.step == s && side >= 0) gather.add(w, side, slot.values.data(), columns);
        return true;
      });
    }
    gather.finish(r, out);
  }
  return out;
}

std::optional<std::vector<uint32_t>> RecentSteps::ranksWithEvents(const std::vector<uint8_t>& kinds, uint64_t from, uint64_t to, uint32_t ranks) const {
  uint32_t mask = 0;
  for (uint8_t k : kinds) {
    if (k >= 32) return std::nullopt;  // a kind StepSummary::event_kinds has no bit for
    mask |= uint32_t{1} << k;
  }
  if (!holds(from, to, ranks)) return std::nullopt;
  std::vector<uint32_t> out;
  for (uint32_t r = 0; r < slots_.size(); ++r) {
    const std::vector<Slot>& ring = slots_[r];
    if (ring.empty()) continue;
    forSteps(from, to, [&](uint64_t s) {
      const Slot& slot = ring[s % depth_];
      if (slot.step != s || (slot.event_kinds & mask) == 0) return true;
      out.push_back(r);
      return false;
    });
  }
  return out;
}

}  // namespace argus::diagnose
