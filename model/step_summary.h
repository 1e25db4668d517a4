// StepSummary: what the continuous diagnosis takes of each record the moment it is durable
// (diagnose/monitor.h): the steps-table columns its stages read of every rank, so a pass
// analyzes recent steps without reading back and decoding what ingest has just decoded.
#pragma once

#include <array>
#include <cstdint>

#include "model/step_record.h"

namespace argus::model {

// The steps-table columns a summary holds, in this order (diagnose::RankPhases's).
enum class SummaryColumn : uint8_t { kCompute, kExposed, kBubble, kTransfer, kIter, kIdle };
inline constexpr std::array<const char*, 6> kSummaryColumnNames = {"compute_ns", "comm_exposed_ns", "bubble_ns", "comm_transfer_ns", "iter_ns", "gpu_idle_ns"};

struct StepSummary {
  uint32_t rank = 0;
  uint64_t step = 0;
  int64_t start_ns = 0, end_ns = 0;
  std::array<int64_t, kSummaryColumnNames.size()> values{};  // by SummaryColumn
  uint32_t event_kinds = 0;  // bit k: the record has an event of EventKind k
  // Name ids of its first kMaxMarkers marker events (a checkpoint or evaluation names one).
  static constexpr size_t kMaxMarkers = 2;
  std::array<uint64_t, kMaxMarkers> markers{};
  uint8_t marker_count = 0;

  int64_t value(SummaryColumn c) const { return values[static_cast<size_t>(c)]; }
};

StepSummary summarize(const StepRecord& r);

}  // namespace argus::model
