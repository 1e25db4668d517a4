// FlightRecorder: the raw events of the last N steps in a bounded ring, dumped on request
// as Chrome-trace JSON that opens in ui.perfetto.dev (docs/capture/step-assembler.md,
// "Flight recorder").
//
// record() copies one TraceEvent into a ring preallocated from the byte cap (no allocation,
// the oldest event is overwritten when full). stepEnded() tells it where steps lie (call it
// from the StepAssembler callback); it keeps the spans of the last `max_steps` steps, and
// a dump covers those (or a chosen range of them). Events are selected by their step time
// (launch time when known, as the assembler assigns them). Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "capture/name_table.h"
#include "capture/trace_event.h"

namespace argus::capture {

struct FlightRecorderOptions {
  size_t max_steps = 8;
  size_t max_bytes = 64u << 20;  // ring memory: max_bytes / sizeof(TraceEvent) events
};

struct ChromeTraceOptions {
  uint32_t rank = 0;  // pid of CPU events; GPU events use pid kGpuPidBase + rank * 1000 + device
  uint64_t from_step = 0;
  uint64_t to_step = UINT64_MAX;  // inclusive; default: every step kept
  static constexpr uint32_t kGpuPidBase = 1'000'000;
};

class FlightRecorder {
 public:
  explicit FlightRecorder(FlightRecorderOptions options = {});

  void record(const TraceEvent& e) {
    ring_[head_] = e;
    head_ = head_ + 1 == ring_.size() ? 0 : head_ + 1;
    if (size_ < ring_.size()) ++size_;
  }
  void stepEnded(uint64_t step, int64_t begin_ns, int64_t end_ns);

  size_t capacityEvents() const { return ring_.size(); }
  size_t sizeEvents() const { return size_; }
  // The steps whose spans are kept, oldest first (at most max_steps).
  std::vector<uint64_t> keptSteps() const;

  // Appends a Chrome-trace JSON object ({"traceEvents": [...], ...}) for the kept steps in
  // [from_step, to_step] to *out. Kernels, copies, collectives and CPU ranges become "X"
  // events (push/pop pairs matched per thread; a push without its pop becomes "B"), marks
  // "i", stack samples "i" with the stack id in args. Times are µs relative to
  // otherData.base_time_ns (exact: integer ns printed with three decimals). Returns
  // NotFound when no kept step is in the range.
  Status writeChromeTrace(const NameTable& names, const ChromeTraceOptions& options, std::string* out) const;
  // writeChromeTrace() into a file.
  Status dumpToFile(const std::string& path, const NameTable& names, const ChromeTraceOptions& options) const;

 private:
  struct StepSpan {
    uint64_t step;
    int64_t begin, end;
  };
  FlightRecorderOptions options_;
  std::vector<TraceEvent> ring_;
  size_t head_ = 0;  // next slot to write
  size_t size_ = 0;
  std::vector<StepSpan> steps_;  // the last max_steps, oldest first
};

}  // namespace argus::capture
