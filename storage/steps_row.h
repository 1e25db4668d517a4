// StepsRow: a record's row of the steps table, its stored columns (ids 3..17) in id order.
// One mapping from StepRecord to those columns, for sealing (TableBlock::append) and for
// head entries, which carry it beside each record so that a steps-table read of unsealed
// data need not decode the record (docs/format/keys.md, "head").
#pragma once

#include <array>
#include <cstdint>

#include "model/step_record.h"

namespace argus::storage {

inline constexpr uint8_t kFirstStepsRowColumn = 3;
inline constexpr size_t kStepsRowColumns = 15;  // start_ns .. comm_transfer_ns
using StepsRow = std::array<int64_t, kStepsRowColumns>;

inline StepsRow stepsRowOf(const model::StepRecord& rec) {
  StepsRow row;
  row[0] = rec.start_ns;
  row[1] = rec.end_ns;
  row[2] = rec.iter_ns;
  row[3] = rec.flags;
  for (int p = 0; p < model::kPhaseColumnCount; ++p) row[4 + p] = rec.phase_ns[p];
  static_assert(4 + model::kPhaseColumnCount == 14, "the phase columns are ids 7..16");
  row[14] = model::commTransferNs(rec.collectives);
  return row;
}

}  // namespace argus::storage
