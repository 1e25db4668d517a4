// The diagnosis as a user runs it, `SELECT * FROM diagnose('job')` on a QueryTarget
// (embedded or argusd), its rows read back into Findings: for `argus demo` and `argus eval`.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "cli/query_target.h"
#include "diagnose/finding.h"

namespace argus::cli {

std::string diagnosisQuery(const std::string& job);

// *secs (may be null): the query's wall time.
Result<std::vector<diagnose::Finding>> runDiagnosis(QueryTarget& target, const std::string& job, double* secs);

}  // namespace argus::cli
