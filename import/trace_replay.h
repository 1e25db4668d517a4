// replayTrace: feeds one rank's imported events (already time-sorted) through one
// capture::StepAssembler, the same code the capture shim runs, and flushes it. Shared by
// the Kineto and the generic Chrome-trace importers.
#pragma once

#include <span>

#include "capture/name_table.h"
#include "capture/step_assembler.h"
#include "capture/trace_event.h"

namespace argus::import {

// Options for importing a finished trace: the input is sorted and complete, so a step is
// emitted once events a minute past its end are seen (GPU work may start long after its
// launch; the memory is already spent on the kept events), and flush() ends the rest.
// `rules`: the importer's name rules.
capture::StepAssemblerOptions importAssemblerOptions(uint32_t rank, capture::NameRules rules = capture::NameRules::defaults());

// Returns the assembler's counters after the last step was handed to `on_step`.
// `names` is the table the events' name ids point into.
capture::AssemblerStats replayTrace(const capture::NameTable& names, std::span<const capture::TraceEvent> events,
                                    const capture::StepAssemblerOptions& options,
                                    const capture::StepAssembler::Callback& on_step);

}  // namespace argus::import
