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

// *secs (may be null): the query's wall time. A deadline of 5 minutes (argusd's longest),
// not 30 s: right after ingest the steps are unsealed head entries, read several times
// slower than chunks, and a sanitizer build is slower again.
Result<std::vector<diagnose::Finding>> runDiagnosis(QueryTarget& target, const std::string& job, double* secs);

}  // namespace argus::cli
