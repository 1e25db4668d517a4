// readKinetoTrace: streams one Kineto / Chrome-trace JSON file (plain or gzipped) through
// a SAX parser into a KinetoTrace. Memory is the kept events (~100 bytes each), never the
// JSON: a 50 MB trace passes through a 256 KB buffer.
#pragma once

#include <string>

#include "base/status.h"
#include "import/kineto_trace.h"

namespace argus::import {

// Returns the trace, or an error naming the file and the byte position: unreadable file,
// truncated or corrupt gzip, malformed JSON, or JSON that is not a trace (no traceEvents).
Result<KinetoTrace> readKinetoTrace(const std::string& path);

}  // namespace argus::import
