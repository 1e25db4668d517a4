#include "import/trace_replay.h"

namespace argus::import {

capture::StepAssemblerOptions importAssemblerOptions(uint32_t rank) {
  capture::StepAssemblerOptions options;
  options.rank = rank;
  options.emit_lag_ns = 60'000'000'000;
  return options;
}

capture::AssemblerStats replayTrace(const KinetoTrace& trace, const capture::StepAssemblerOptions& options,
                                    const capture::StepAssembler::Callback& on_step) {
  capture::StepAssembler assembler(trace.names, options, on_step);
  for (const capture::TraceEvent& e : trace.events) assembler.onEvent(e);
  assembler.flush();
  return assembler.stats();
}

}  // namespace argus::import
