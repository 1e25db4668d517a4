#include "import/trace_replay.h"

#include <utility>

namespace argus::import {

capture::StepAssemblerOptions importAssemblerOptions(uint32_t rank, capture::NameRules rules) {
  capture::StepAssemblerOptions options;
  options.rank = rank;
  options.rules = std::move(rules);
  options.emit_lag_ns = 60'000'000'000;
  return options;
}

capture::AssemblerStats replayTrace(const capture::NameTable& names, std::span<const capture::TraceEvent> events,
                                    const capture::StepAssemblerOptions& options, const capture::StepAssembler::Callback& on_step) {
  capture::StepAssembler assembler(names, options, on_step);
  assembler.onEvents(events);
  assembler.flush();
  return assembler.stats();
}

}  // namespace argus::import
