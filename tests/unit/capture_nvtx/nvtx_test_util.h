// Shared by the capture_nvtx unit tests: a Drain over the process's Recorder with its own
// NameTable, collecting what each drain() returns.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "capture/name_table.h"
#include "capture/nvtx/nvtx_drain.h"
#include "capture/trace_event.h"

namespace argus::capture::nvtx::testing {

inline uint32_t currentTid() {
  return static_cast<uint32_t>(syscall(SYS_gettid));
}

struct Collected {
  NameTable names;
  Drain drain;
  std::vector<TraceEvent> events;

  explicit Collected(DrainOptions options = {}) : drain(Recorder::instance(), names, std::move(options)) {}

  // Drains once; returns what this drain gave (also appended to `events`).
  std::vector<TraceEvent> pull() {
    std::span<const TraceEvent> got = drain.drain();
    std::vector<TraceEvent> out(got.begin(), got.end());
    events.insert(events.end(), out.begin(), out.end());
    return out;
  }
  std::string name(const TraceEvent& e) const { return std::string(names.text(e.name)); }
  // Events of `type` named `text`.
  std::vector<TraceEvent> find(EventType type, const std::string& text) const {
    std::vector<TraceEvent> out;
    for (const TraceEvent& e : events) {
      if (e.type == type && name(e) == text) out.push_back(e);
    }
    return out;
  }
};

}  // namespace argus::capture::nvtx::testing
