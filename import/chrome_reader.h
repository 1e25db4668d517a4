// readChromeTrace: streams one generic Chrome-trace JSON file (plain or gzipped) from an
// op-level timeline tool into per-rank assembler events (docs/import/chrome.md). Memory is
// the kept ops (~64 bytes each while reading, ~100 per assembler event after), never the
// JSON: the file passes through a 256 KB buffer.
#pragma once

#include <string>

#include "base/status.h"
#include "capture/step_assembler.h"
#include "import/chrome_mapping.h"
#include "import/chrome_trace.h"

namespace argus::import {

// Returns the trace, or an error naming the file and, where there is one, the byte
// position: unreadable file, truncated or corrupt gzip, malformed JSON, JSON that is not a
// trace (no traceEvents array), no complete events, no op with a step arg, or a thread
// whose rank neither its names nor its pid tell.
Result<ChromeTrace> readChromeTrace(const std::string& path, const ChromeMapping& mapping);

// The options each rank of a ChromeTrace is replayed with: importAssemblerOptions (the
// file is complete and sorted) with the mapping's name rules, and no step inference: steps
// come from args, so a rank without them has none.
capture::StepAssemblerOptions chromeAssemblerOptions(uint32_t rank, const ChromeMapping& mapping);

}  // namespace argus::import
