// replayTrace: feeds a KinetoTrace's events (already time-sorted) through one
// capture::StepAssembler, the same code the capture shim runs, and flushes it.
#pragma once

#include "capture/step_assembler.h"
#include "import/kineto_trace.h"

namespace argus::import {

// Options for importing a finished trace: the input is sorted and complete, so a step is
// emitted once events a minute past its end are seen (GPU work may start long after its
// launch; the memory is already spent on the kept events), and flush() ends the rest.
capture::StepAssemblerOptions importAssemblerOptions(uint32_t rank);

// Returns the assembler's counters after the last step was handed to `on_step`.
capture::AssemblerStats replayTrace(const KinetoTrace& trace, const capture::StepAssemblerOptions& options,
                                    const capture::StepAssembler::Callback& on_step);

}  // namespace argus::import
