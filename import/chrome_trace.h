// ChromeTrace: what the generic Chrome-trace importer keeps of one file (docs/import/chrome.md):
// for every rank the file holds, the events to feed that rank's StepAssembler, already in
// the assembler's form (capture::TraceEvent) and time order, plus the file's facts. The
// JSON itself is never held.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "capture/name_table.h"
#include "capture/trace_event.h"

namespace argus::import {

struct ChromeCounts {
  uint64_t trace_events = 0;  // elements of traceEvents[]
  uint64_t complete = 0;      // "X" events with a usable ts and dur
  uint64_t skipped = 0;       // "X" events with a missing or unusable ts / dur, or an overflowing end
  uint64_t not_read = 0;      // events of other phases ("B"/"E", "i", flows, counters ...)
  uint64_t metadata = 0;      // "M" process_name / thread_name events
  uint64_t ops = 0;           // work ops handed to the assemblers (as kernels)
  uint64_t collectives = 0;   // of those, communication ops (each also a kCollective)
  uint64_t data_ranges = 0;   // data-loading ops (CPU ranges)
  uint64_t ignored = 0;       // ops of class ignore
  uint64_t enclosing = 0;     // ops enclosing another op of their thread: context, not work
  uint64_t without_step = 0;  // kept ops without a step arg: they count where their start falls
  uint64_t bad_args = 0;      // step / microbatch args present but not a non-negative integer
  uint64_t crossing = 0;      // ops starting outside their own step's window (they count where they start)
};

// One rank's share of the file.
struct ChromeRank {
  uint32_t rank = 0;
  uint64_t steps = 0;  // distinct step numbers
  // Step ranges, microbatch ranges, data ranges, kernels and collectives, stable-sorted
  // by start_ns: the order the StepAssembler is fed in.
  std::vector<capture::TraceEvent> events;
};

struct ChromeTrace {
  std::string path;
  capture::NameTable names;  // shared by every rank's events
  std::vector<ChromeRank> ranks;  // ascending rank
  uint64_t raw_bytes = 0;       // uncompressed JSON bytes
  uint64_t file_bytes = 0;      // bytes on disk
  uint64_t op_event_bytes = 0;  // JSON bytes of the event objects that became work ops
  bool gzipped = false;
  ChromeCounts counts;
};

}  // namespace argus::import
