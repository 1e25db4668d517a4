// KinetoTrace: what the importer keeps of one PyTorch profiler (Kineto) trace file: the
// events that matter to the step assembler, in the compact capture::TraceEvent form, sorted
// by time, plus the file's facts (rank, byte counts). The JSON itself is never held.
// Mapping of Kineto events: docs/import/kineto.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "capture/name_table.h"
#include "capture/trace_event.h"

namespace argus::import {

struct KinetoCounts {
  uint64_t trace_events = 0;     // elements of traceEvents[]
  uint64_t kernels = 0;          // cat "kernel" kept (NCCL included)
  uint64_t nccl_kernels = 0;
  uint64_t copies = 0;           // gpu_memcpy + gpu_memset kept
  uint64_t ranges = 0;           // cpu_op + user_annotation kept
  uint64_t step_markers = 0;     // user_annotation / cpu_op ranges named ProfilerStep#N
  uint64_t launches = 0;         // cuda_runtime / cuda_driver calls with a correlation id
  uint64_t launches_matched = 0;  // GPU events whose launch was found by correlation
  uint64_t collectives = 0;      // kCollective events made from NCCL kernels' args
  uint64_t skipped = 0;          // kept categories with a missing or unusable ts / dur
};

struct KinetoTrace {
  std::string path;
  capture::NameTable names;
  // The order the StepAssembler is fed in: by start_ns (stable), CPU events first within
  // each 50 ms slice (import::kCpuLeadNs, kineto_reader.h).
  std::vector<capture::TraceEvent> events;
  std::optional<uint32_t> rank;  // distributedInfo.rank
  uint32_t world_size = 0;       // distributedInfo.world_size (0: not given)
  int64_t base_time_ns = 0;      // baseTimeNanoseconds, already added to every time
  uint64_t raw_bytes = 0;        // uncompressed JSON bytes
  uint64_t file_bytes = 0;       // bytes on disk
  uint64_t kernel_event_bytes = 0;  // JSON bytes of the cat "kernel" event objects
  bool gzipped = false;
  KinetoCounts counts;
};

}  // namespace argus::import
