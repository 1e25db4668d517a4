// Text forms of data-model objects for `argus dump` (one object per line group, stable
// field order, so tests and people can grep them).
#pragma once

#include <string>

#include "model/step_record.h"

namespace argus::cli {

std::string describeStepRecord(const model::StepRecord& rec);
std::string describeTopology(const model::RankTopology& t);

}  // namespace argus::cli
