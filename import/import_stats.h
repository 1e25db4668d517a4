// ImportStats and StepRecordChecker: the figures of `argus import --stats json`
// (docs/import/kineto.md, "Stats"; docs/import/chrome.md): how many bytes a step costs raw
// and on the wire, and how far the records are from an exact recomputation over the same
// rank's events.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <span>

#include "capture/name_rules.h"
#include "capture/name_table.h"
#include "capture/trace_event.h"
#include "model/step_chain.h"
#include "model/step_record.h"

namespace argus::import {

struct ImportStats {
  uint64_t steps = 0;
  uint64_t kernels = 0;             // GPU kernel executions in the records (copies excluded)
  uint64_t raw_bytes = 0;           // uncompressed trace JSON
  uint64_t kernel_event_bytes = 0;  // JSON of the kernel events alone
  uint64_t wire_bytes = 0;          // ChainedStepEncoder bytes of the records
  // What the records would cost per step in a long run (one keyframe per block of steps,
  // the other steps costing what this trace's later records cost), times steps: so that
  // perStep() of a merge is the step-weighted mean.
  double steady_wire_bytes = 0;
  double p50_max_rel_error = 0;
  double p99_max_rel_error = 0;
  int64_t total_max_abs_error_ns = 0;  // step and phase totals
  // Worst |recorded - exact| / exact of kernel time: per (step, signature) and per step.
  // Per-kernel totals are sketch totals (within 1%) unless the assembler keeps them exact.
  double kernel_total_max_rel_error = 0;
  // (step, signature) pairs whose kernel count differs from the exact recomputation, and
  // step totals that could not be checked; both 0 when the records agree with the trace.
  uint64_t count_mismatches = 0;

  void merge(const ImportStats& other);
  double perStep(double v) const { return steps == 0 ? 0.0 : v / static_cast<double>(steps); }
  double perStep(uint64_t v) const { return perStep(static_cast<double>(v)); }
  double ratio() const { return wire_bytes == 0 ? 0.0 : static_cast<double>(raw_bytes) / static_cast<double>(wire_bytes); }
  double steadyRatio() const { return steady_wire_bytes == 0 ? 0.0 : static_cast<double>(raw_bytes) / steady_wire_bytes; }
};

// Checks each record of one rank against that rank's own events, recomputed without the
// assembler: which kernels belong to the step (launch time, or GPU start for inferred
// steps, inside [start_ns, end_ns)), their exact duration quantiles per signature, and the
// step's totals (iteration, compute, communication total and exposed, GPU idle, data wait,
// kernel time) from plain interval unions. `rules` must be the assembler's: they say
// which kernels are communication, which ranges step markers and data loading.
class StepRecordChecker {
 public:
  StepRecordChecker(const capture::NameTable& names, std::span<const capture::TraceEvent> events,
                    const capture::NameRules& rules = capture::NameRules::defaults(), uint32_t block_steps = 256);
  // Encodes the record as a sender would and compares it with the exact figures.
  void add(const model::StepRecord& record);
  // The figures so far; raw_bytes and kernel_event_bytes are the caller's (they belong to
  // the file, which may hold several ranks).
  ImportStats finish() const;

 private:
  struct Member {
    int64_t key, start, end;
    uint64_t signature;
    bool kernel, comm;
  };
  struct Span {
    int64_t begin, end;
  };
  void checkQuantiles(const model::StepRecord& rec, const std::vector<const Member*>& members);
  void checkTotals(const model::StepRecord& rec, const std::vector<const Member*>& members);
  void noteError(int64_t approx, int64_t exact);
  void noteKernelTimeError(int64_t recorded, int64_t exact);

  model::ChainedStepEncoder encoder_;
  std::string encoded_;
  uint32_t block_steps_;
  uint64_t first_record_bytes_ = 0;  // the session's first keyframe
  std::vector<Member> by_launch_, by_start_;  // GPU activities sorted by key
  std::vector<Span> busy_, compute_all_, data_load_;  // merged, whole trace
  std::unordered_map<int64_t, int64_t> marker_end_;  // step marker begin -> end
  std::unordered_set<uint64_t> kernel_signatures_;
  ImportStats stats_;
};

}  // namespace argus::import
