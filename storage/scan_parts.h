// RocksScanParts: a planned scan (RocksScanCursor::init) split into parts for threads
// (Store::scanParts). The planned ranks are cut into stripes of consecutive ranks (about
// kStripeRankSteps rank-steps each, about eight per part so the work evens out), dealt
// round-robin: part p takes stripes p, p + parts, ... (or, contiguous, the p-th run of
// stripes/parts). Each part is a worker cursor of the planner (its plan and snapshot).
#pragma once

#include <memory>
#include <vector>

#include "storage/scan_cursor.h"

namespace argus::storage {

class RocksScanParts final : public ScanParts {
 public:
  // REQUIRES: planner->init() succeeded. contiguous: ScanSpec::contiguous_parts.
  RocksScanParts(std::unique_ptr<RocksScanCursor> planner, size_t parts, bool contiguous = false);
  ~RocksScanParts() override;

  size_t size() const override { return parts_.size(); }
  size_t stripes() const override { return stripes_; }
  size_t batchRows() const override { return planner_->batchRows(); }
  ScanPart& part(size_t i) override;

 private:
  class Part;
  static constexpr uint64_t kStripeRankSteps = 8192;
  std::unique_ptr<RocksScanCursor> planner_;  // owns the snapshot: outlives the parts
  size_t stripes_ = 0;
  std::vector<std::unique_ptr<Part>> parts_;
};

}  // namespace argus::storage
