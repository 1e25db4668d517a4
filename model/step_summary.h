// StepSummary: what the continuous diagnosis takes of each record the moment it is durable
// (diagnose/monitor.h): the values of stage 1's step series, so a pass feeds its detectors
// without reading back and decoding what ingest has just decoded.
#pragma once

#include <array>
#include <cstdint>

#include "model/step_record.h"

namespace argus::model {

struct StepSummary {
  uint32_t rank = 0;
  uint64_t step = 0;
  int64_t start_ns = 0, end_ns = 0;
  // The steps table's iter_ns, compute_ns and comm_transfer_ns: diagnose::kDetectedSeries.
  std::array<int64_t, 3> series{};
  // Name ids of its first kMaxMarkers marker events (a checkpoint or evaluation names one).
  static constexpr size_t kMaxMarkers = 2;
  std::array<uint64_t, kMaxMarkers> markers{};
  uint8_t marker_count = 0;
};

StepSummary summarize(const StepRecord& r);

}  // namespace argus::model
