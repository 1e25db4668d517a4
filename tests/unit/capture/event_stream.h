// EventStream: hand-built TraceEvent streams for the capture tests.
#pragma once

#include <string>
#include <vector>

#include "capture/name_table.h"
#include "capture/step_assembler.h"
#include "capture/trace_event.h"
#include "model/step_record.h"

namespace argus::capture::testing {

struct EventStream {
  NameTable names;
  std::vector<TraceEvent> events;

  TraceEvent& kernel(const std::string& name, int64_t start, int64_t end, uint32_t stream = 7, int64_t launch = kNoTime,
                     uint32_t thread = 0) {
    TraceEvent e;
    e.type = EventType::kKernel;
    e.name = names.intern(name);
    e.start_ns = start, e.end_ns = end, e.launch_ns = launch;
    e.stream = stream, e.thread = thread;
    e.geometry = {1, 1, 1, 128, 1, 1};
    e.id = model::kernelSignature(name, e.geometry);
    events.push_back(e);
    return events.back();
  }
  // A CPU-side event of `type` on `thread` over [start, end); `name` empty: none.
  TraceEvent& cpu(EventType type, const std::string& name, int64_t start, int64_t end, uint32_t thread) {
    TraceEvent e;
    e.type = type;
    if (!name.empty()) e.name = names.intern(name);
    e.start_ns = start, e.end_ns = end, e.thread = thread;
    events.push_back(e);
    return events.back();
  }
  TraceEvent& range(const std::string& name, int64_t start, int64_t end, uint32_t thread = 1) {
    return cpu(EventType::kRange, name, start, end, thread);
  }
  TraceEvent& push(const std::string& name, int64_t ts, uint32_t thread = 1) { return cpu(EventType::kRangeBegin, name, ts, ts, thread); }
  TraceEvent& pop(int64_t ts, uint32_t thread = 1) { return cpu(EventType::kRangeEnd, "", ts, ts, thread); }
  TraceEvent& mark(const std::string& name, int64_t ts, uint32_t thread = 1) { return cpu(EventType::kMark, name, ts, ts, thread); }
  TraceEvent& sample(uint64_t stack, int64_t ts, uint32_t thread = 1) {
    TraceEvent& e = cpu(EventType::kStackSample, "", ts, ts, thread);
    e.id = stack;
    return e;
  }
  TraceEvent& memcpy(CopyKind kind, int64_t start, int64_t end, uint64_t bytes, uint32_t stream = 9) {
    TraceEvent e;
    e.type = EventType::kMemcpy;
    e.copy_kind = kind;
    e.bytes = bytes;
    e.start_ns = start, e.end_ns = end, e.stream = stream;
    events.push_back(e);
    return events.back();
  }
  TraceEvent& collective(model::CollectiveOp op, uint64_t comm, uint64_t bytes, int64_t start, int64_t end, uint32_t stream = 8) {
    TraceEvent e;
    e.type = EventType::kCollective;
    e.name = names.intern(model::collectiveOpName(op));
    e.op = op, e.id = comm, e.bytes = bytes;
    e.start_ns = start, e.end_ns = end, e.stream = stream;
    events.push_back(e);
    return events.back();
  }
  TraceEvent& launch(uint32_t correlation, int64_t ts, uint32_t thread = 1) {
    TraceEvent& e = cpu(EventType::kLaunch, "", ts, ts, thread);
    e.correlation = correlation;
    return e;
  }

  uint64_t sig(const std::string& name) const { return model::kernelSignature(name, {1, 1, 1, 128, 1, 1}); }
};

// Collects what an assembler emits.
struct Collected {
  std::vector<model::StepRecord> records;
  std::vector<model::KernelDictEntry> kernels;
  std::vector<model::StringDictEntry> strings;
  StepAssembler::Callback callback() {
    return [this](const StepOutput& out) {
      records.push_back(out.record);
      kernels.insert(kernels.end(), out.new_kernels.begin(), out.new_kernels.end());
      strings.insert(strings.end(), out.new_strings.begin(), out.new_strings.end());
    };
  }
};

// Feeds the whole stream to a fresh assembler and flushes it; returns the records (also
// collected in *out, with their dictionary entries, when given), and the assembler's
// statistics in *stats when given.
inline std::vector<model::StepRecord> assemble(const EventStream& s, Collected* out = nullptr, StepAssemblerOptions options = {},
                                               AssemblerStats* stats = nullptr) {
  Collected local;
  Collected& c = out ? *out : local;
  StepAssembler a(s.names, std::move(options), c.callback());
  for (const TraceEvent& e : s.events) a.onEvent(e);
  a.flush();
  if (stats) *stats = a.stats();
  return c.records;
}

inline const model::KernelStat* findKernel(const model::StepRecord& r, uint64_t sig) {
  for (const auto& k : r.kernels) {
    if (k.signature == sig) return &k;
  }
  return nullptr;
}

inline const model::KernelStat* findKernel(const model::StepRecord& r, uint64_t sig, model::Phase phase) {
  for (const auto& k : r.kernels) {
    if (k.signature == sig && k.phase == phase) return &k;
  }
  return nullptr;
}

}  // namespace argus::capture::testing
