#include "import/kineto_reader.h"

#include <algorithm>

#include "capture/name_rules.h"
#include "import/kineto_sax.h"

namespace argus::import {

namespace {

int64_t shifted(int64_t t, int64_t by) {
  int64_t out = 0;
  // On overflow the event gets an impossible time, which the assembler counts as invalid.
  return __builtin_add_overflow(t, by, &out) ? INT64_MAX : out;
}

// GPU work points back to its CPU launch through the correlation id (any order in the file).
void resolveLaunches(std::vector<LaunchRecord>& launches, KinetoTrace* trace) {
  auto byCorrelation = [](const LaunchRecord& a, const LaunchRecord& b) {
    return a.correlation != b.correlation ? a.correlation < b.correlation : a.ts_ns < b.ts_ns;
  };
  std::sort(launches.begin(), launches.end(), byCorrelation);
  for (capture::TraceEvent& e : trace->events) {
    if (!e.isGpuActivity() || e.correlation == 0) continue;
    auto it = std::lower_bound(launches.begin(), launches.end(), LaunchRecord{e.correlation, 0, INT64_MIN}, byCorrelation);
    if (it == launches.end() || it->correlation != e.correlation) continue;
    e.launch_ns = it->ts_ns;
    e.thread = it->thread;
    ++trace->counts.launches_matched;
  }
}

// NCCL kernels whose args name the collective become kCollective events too, so records
// carry the communicator and bytes. One without them needs none: the assembler counts an
// NCCL kernel that no collective event covers as its own collective.
void addCollectives(const std::vector<KinetoSax::CollectiveArgs>& args, KinetoTrace* trace) {
  for (const auto& a : args) {
    if (!a.has_args) continue;
    capture::TraceEvent c = trace->events[a.event];
    c.type = capture::EventType::kCollective;
    c.op = capture::collectiveOpFromName(trace->names.text(c.name));
    c.id = a.communicator;
    c.bytes = a.bytes;
    c.correlation = 0;  // launch_ns is already resolved
    trace->events.push_back(c);
    ++trace->counts.collectives;
  }
}

// The capture shim's collector feeds its assembler every 50 ms: the NVTX ranges of those
// 50 ms, then the GPU records CUPTI has flushed, so the CPU side runs ahead of the GPU work.
// An import replays that order in slices of kCpuLeadNs of start time: each slice's CPU
// events, then its GPU work and collectives, each part in time order. Records do not change
// (an import's emit lag, a minute, dwarfs a slice), and the assembler, fed runs of one kind
// instead of a fine interleaving, mispredicts less (bench/ab_assembler.sh).
void cpuFirstPerSlice(std::vector<capture::TraceEvent>& events) {
  auto onCpu = [](const capture::TraceEvent& e) { return !e.isGpuActivity() && e.type != capture::EventType::kCollective; };
  std::vector<capture::TraceEvent> gpu;  // one slice's GPU part, reused
  for (size_t from = 0, n = events.size(); from < n;) {
    // A slice starts at an event, not at a multiple of the width: no division per event.
    const int64_t start = events[from].start_ns;
    const int64_t slice_end = start > INT64_MAX - kCpuLeadNs ? INT64_MAX : start + kCpuLeadNs;
    size_t to = from + 1;
    while (to < n && events[to].start_ns < slice_end) ++to;
    gpu.clear();
    size_t cpu_end = from;
    for (size_t i = from; i < to; ++i) {
      if (onCpu(events[i])) {
        events[cpu_end++] = events[i];
      } else {
        gpu.push_back(events[i]);
      }
    }
    std::copy(gpu.begin(), gpu.end(), events.begin() + static_cast<ptrdiff_t>(cpu_end));
    from = to;
  }
}

}  // namespace

void orderForReplay(std::vector<capture::TraceEvent>& events) {
  std::stable_sort(events.begin(), events.end(), [](const capture::TraceEvent& a, const capture::TraceEvent& b) { return a.start_ns < b.start_ns; });
  cpuFirstPerSlice(events);
}

Result<KinetoTrace> readKinetoTrace(const std::string& path) {
  KinetoTrace trace;
  trace.path = path;
  KinetoSax sax(&trace);
  Result<TraceFileFacts> facts = streamTraceJson(path, &sax, "Kineto / Chrome trace");
  if (!facts.isOk()) return facts.status();
  trace.raw_bytes = facts->raw_bytes;
  trace.gzipped = facts->gzipped;
  trace.file_bytes = facts->file_bytes;

  resolveLaunches(sax.launches(), &trace);
  addCollectives(sax.collectiveArgs(), &trace);
  if (auto base = sax.baseTimeNs(); base && *base != 0) {
    // Newer Kineto writes ts relative to baseTimeNanoseconds (Unix epoch ns).
    trace.base_time_ns = *base;
    for (capture::TraceEvent& e : trace.events) {
      e.start_ns = shifted(e.start_ns, *base);
      e.end_ns = shifted(e.end_ns, *base);
      if (e.launch_ns != capture::kNoTime) e.launch_ns = shifted(e.launch_ns, *base);
    }
  }
  // Kineto writes CPU events, then GPU events per stream: the assembler wants time order.
  orderForReplay(trace.events);
  trace.events.shrink_to_fit();
  return trace;
}

}  // namespace argus::import
