// RecordedFinding: a finding of the continuous diagnosis as argusd keeps it in the store
// (Store::addFinding; the `findings(job)` table function reads them back): the finding, and
// when and how soon it was found. The value layout is docs/format/keys.md's "finding".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "diagnose/finding.h"

namespace argus::diagnose {

struct RecordedFinding {
  Finding finding;
  int64_t detected_ns = 0;         // Unix ns
  uint64_t steps_after_onset = 0;  // the job's newest step when it was found, minus the window's first
  double lag_s = 0;                // from when the step that opened the window first had durable records
};

std::string encodeRecordedFinding(const RecordedFinding& r);
// Corruption naming the field on a truncated or malformed value, or a version other than 1.
Status decodeRecordedFinding(std::string_view value, RecordedFinding* out);

}  // namespace argus::diagnose
