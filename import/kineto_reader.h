// readKinetoTrace: streams one Kineto / Chrome-trace JSON file (plain or gzipped) through
// a SAX parser into a KinetoTrace. Memory is the kept events (~100 bytes each), never the
// JSON: a 50 MB trace passes through a 256 KB buffer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "import/kineto_trace.h"

namespace argus::import {

// The trace's events come out by start time, except that within each slice of kCpuLeadNs
// the CPU events (ranges, marks, launches) come before the GPU work and collectives: the
// order the capture shim feeds its assembler in, whose collector drains every 50 ms
// (kineto_reader.cpp, cpuFirstPerSlice).
inline constexpr int64_t kCpuLeadNs = 50'000'000;

// Puts `events` in that order: by start time (stable), CPU events first per slice.
void orderForReplay(std::vector<capture::TraceEvent>& events);

// Returns the trace, or an error naming the file and the byte position: unreadable file,
// truncated or corrupt gzip, malformed JSON, or JSON that is not a trace (no traceEvents).
Result<KinetoTrace> readKinetoTrace(const std::string& path);

}  // namespace argus::import
