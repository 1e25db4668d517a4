// slowComputeKernels: what one rank's trace would have recorded on a GPU that runs its
// compute kernels `factor` times slower. Used to score the diagnosis on real traces with a
// known culprit (`argus eval`): each compute kernel lasts `factor` times longer, and the
// GPU work after it on the same stream starts that much later. NCCL kernels and collectives
// keep their times (their length is the network's and the peers'). The events come back in
// the order the assembler is fed in (orderForReplay).
#pragma once

#include <vector>

#include "capture/name_table.h"
#include "capture/trace_event.h"

namespace argus::import {

// Returns how many kernels were stretched. factor >= 1.
size_t slowComputeKernels(const capture::NameTable& names, double factor, std::vector<capture::TraceEvent>& events);

}  // namespace argus::import
