#include "storage/scan_parts.h"

#include <algorithm>

namespace argus::storage {

class RocksScanParts::Part final : public ScanPart {
 public:
  // Stripes first, first + step, ... below end.
  Part(std::unique_ptr<RocksScanCursor> cursor, size_t first, size_t step, size_t end, size_t stripe_ranks)
      : cursor_(std::move(cursor)), next_(first), step_(step), end_(end), stripe_ranks_(stripe_ranks) {}

  bool nextStripe() override {
    if (next_ >= end_) return false;
    stripe_ = next_;
    next_ += step_;
    cursor_->setRanks(stripe_ * stripe_ranks_, (stripe_ + 1) * stripe_ranks_);
    return true;
  }
  size_t stripe() const override { return stripe_; }
  Status next(ColumnBatch* batch, bool* has_rows) override { return cursor_->next(batch, has_rows); }
  const ScanStats& stats() const override { return cursor_->stats(); }

 private:
  std::unique_ptr<RocksScanCursor> cursor_;
  size_t next_, step_, end_, stripe_ranks_;
  size_t stripe_ = 0;
};

RocksScanParts::RocksScanParts(std::unique_ptr<RocksScanCursor> planner, size_t parts, bool contiguous) : planner_(std::move(planner)) {
  const size_t ranks = planner_->rankCount();
  parts = std::max<size_t>(parts, 1);
  // A stripe holds about kStripeRankSteps rank-steps, and each part gets about eight
  // stripes so the work evens out. A round-robin part's reads skip the other parts'
  // stripes (a seek, or a few Next()s, per stripe): short step ranges take many ranks per
  // stripe, or that skip would cost as much as the reads.
  const size_t by_steps = std::max<uint64_t>(kStripeRankSteps / planner_->stepsPerRank(), 1);
  const size_t stripe_ranks = std::clamp<size_t>(ranks / (parts * 8), 1, by_steps);
  stripes_ = (ranks + stripe_ranks - 1) / stripe_ranks;
  parts = std::clamp<size_t>(stripes_, 1, parts);
  for (size_t p = 0; p < parts; ++p) {
    if (contiguous) {
      parts_.push_back(std::make_unique<Part>(planner_->worker(), stripes_ * p / parts, 1, stripes_ * (p + 1) / parts, stripe_ranks));
    } else {
      parts_.push_back(std::make_unique<Part>(planner_->worker(), p, parts, stripes_, stripe_ranks));
    }
  }
}

RocksScanParts::~RocksScanParts() = default;

ScanPart& RocksScanParts::part(size_t i) { return *parts_[i]; }

}  // namespace argus::storage
