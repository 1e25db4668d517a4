#include "import/kineto_reader.h"

#include <algorithm>
#include <filesystem>
#include <istream>

#include "capture/name_rules.h"
#include "import/gzip_streambuf.h"
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
// carry the communicator and bytes. Either every NCCL kernel of the file gets one or none
// does: the assembler takes collectives from kCollective events once it has seen one.
void addCollectives(const std::vector<KinetoSax::CollectiveArgs>& args, KinetoTrace* trace) {
  bool any = std::any_of(args.begin(), args.end(), [](const auto& a) { return a.has_args; });
  if (!any) return;
  for (const auto& a : args) {
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

}  // namespace

Result<KinetoTrace> readKinetoTrace(const std::string& path) {
  GzipStreamBuf input;
  if (!input.open(path)) return Status::ioError(path + ": " + input.error());
  KinetoTrace trace;
  trace.path = path;
  KinetoSax sax(&trace, &input);
  std::istream stream(&input);
  bool parsed = nlohmann::json::sax_parse(stream, &sax);
  auto gzipError = [&] {
    return Status::corruption(path + ": truncated or corrupt gzip stream after " + std::to_string(input.position()) +
                              " bytes of JSON (compressed byte " + std::to_string(input.compressedPosition()) + "): " + input.error());
  };
  if (!input.error().empty()) return gzipError();
  if (!parsed) {
    std::string why = sax.error().empty() ? "parse stopped at byte " + std::to_string(input.position()) : sax.error();
    return Status::corruption(path + ": " + why);
  }
  input.drain();  // a gzip trailer cut off after the JSON still is a broken file
  if (!input.error().empty()) return gzipError();
  if (!sax.sawTraceEvents()) {
    return Status::invalidArgument(path + ": not a Kineto / Chrome trace: no traceEvents array in " +
                                   std::to_string(input.position()) + " bytes of JSON");
  }
  trace.raw_bytes = input.position();
  trace.gzipped = input.gzipped();
  std::error_code ec;
  trace.file_bytes = std::filesystem::file_size(path, ec);
  if (ec) trace.file_bytes = 0;

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
  std::stable_sort(trace.events.begin(), trace.events.end(),
                   [](const capture::TraceEvent& a, const capture::TraceEvent& b) { return a.start_ns < b.start_ns; });
  trace.events.shrink_to_fit();
  return trace;
}

}  // namespace argus::import
