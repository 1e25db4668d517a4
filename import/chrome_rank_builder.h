// buildChromeRank: turns one rank's ops of a generic Chrome trace into the events its
// StepAssembler is fed (docs/import/chrome.md, "Steps, microbatches, ops"):
//  - one `argus:step#N` range per step N: [first start of N's ops, first start of N+1's)
//    when step N+1 follows on this rank, else [first start, last end) of N's ops;
//  - one `argus:microbatch` range per run of consecutive ops (in start order) of the same
//    step and microbatch, so the assembler's bubble is the device idle between runs;
//  - data ops as data-loading ranges; work ops as kernels (signature from the op name),
//    communication ops also as kCollective events (op, bytes, peer, group).
// An op that encloses another op of its thread (Chrome "X" events of one thread nest) is
// context, not work: it shapes the step window but is no kernel, so time is not counted twice.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "import/chrome_sax.h"
#include "import/chrome_trace.h"

namespace argus::import {

struct ChromeRankInput {
  uint32_t rank = 0;
  std::span<const ChromeOp> ops;  // this rank's ops, in file order
};

// `stream_of_track[t]` is the stream of ChromeOp::track t; `kinds` classifies name ids.
// Interns the synthetic range names into trace->names and adds to trace->counts.
ChromeRank buildChromeRank(const ChromeRankInput& input, const std::vector<uint32_t>& stream_of_track, const ChromeSax& kinds,
                           ChromeTrace* trace);

}  // namespace argus::import
