#include "capture/flight_recorder.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "base/json_string.h"
#include "model/step_record.h"

namespace argus::capture {

namespace {

void appendMicros(std::string* out, int64_t ns) {
  char buf[48];
  const char* sign = ns < 0 ? "-" : "";
  uint64_t v = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%03" PRIu64, sign, v / 1000, v % 1000);
  out->append(buf);
}

void appendUint(std::string* out, uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%" PRIu64, v);
  out->append(buf);
}

}  // namespace

FlightRecorder::FlightRecorder(FlightRecorderOptions options) : options_(options) {
  ring_.resize(std::max<size_t>(1, options_.max_bytes / sizeof(TraceEvent)));
  steps_.reserve(options_.max_steps + 1);
}

void FlightRecorder::stepEnded(uint64_t step, int64_t begin_ns, int64_t end_ns) {
  if (options_.max_steps == 0) return;
  if (steps_.size() == options_.max_steps) steps_.erase(steps_.begin());
  steps_.push_back({step, begin_ns, end_ns});
}

std::vector<uint64_t> FlightRecorder::keptSteps() const {
  std::vector<uint64_t> out;
  out.reserve(steps_.size());
  for (const StepSpan& s : steps_) out.push_back(s.step);
  return out;
}

Status FlightRecorder::writeChromeTrace(const NameTable& names, const ChromeTraceOptions& opt, std::string* out) const {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const StepSpan& s : steps_) {
    if (s.step < opt.from_step || s.step > opt.to_step) continue;
    lo = std::min(lo, s.begin);
    hi = std::max(hi, s.end);
  }
  if (lo > hi) return Status::notFound("flight recorder: no kept step in the requested range");

  // The ring in time of arrival, oldest first.
  std::vector<const TraceEvent*> events;
  events.reserve(size_);
  size_t first = (head_ + ring_.size() - size_) % ring_.size();
  for (size_t k = 0; k < size_; ++k) events.push_back(&ring_[(first + k) % ring_.size()]);

  const uint32_t cpu_pid = opt.rank;
  auto gpuPid = [&](uint32_t device) { return ChromeTraceOptions::kGpuPidBase + opt.rank * 1000 + device; };
  auto stepTime = [](const TraceEvent& e) { return e.isGpuActivity() && e.launch_ns != kNoTime ? e.launch_ns : e.start_ns; };
  bool first_event = true;
  auto open = [&](const char* ph, uint32_t pid, uint32_t tid, std::string_view name, int64_t ts) {
    out->append(first_event ? "\n" : ",\n");
    first_event = false;
    out->append("{\"ph\":\"").append(ph).append("\",\"pid\":");
    appendUint(out, pid);
    out->append(",\"tid\":");
    appendUint(out, tid);
    out->append(",\"name\":");
    appendJsonString(out, name);
    out->append(",\"ts\":");
    appendMicros(out, ts - lo);
  };
  auto dur = [&](int64_t d) {
    out->append(",\"dur\":");
    appendMicros(out, d);
  };

  out->append("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"base_time_ns\":");
  appendUint(out, static_cast<uint64_t>(lo));
  out->append(",\"rank\":");
  appendUint(out, opt.rank);
  out->append("},\"traceEvents\":[");

  // Name the processes so the GPU and CPU rows read well in Perfetto.
  std::vector<uint32_t> devices;
  for (const TraceEvent* e : events) {
    if (e->isGpuActivity() || e->type == EventType::kCollective) {
      if (std::find(devices.begin(), devices.end(), e->device) == devices.end()) devices.push_back(e->device);
    }
  }
  std::string label = "rank " + std::to_string(opt.rank) + " CPU";
  out->append(first_event ? "\n" : ",\n");
  first_event = false;
  out->append("{\"ph\":\"M\",\"pid\":");
  appendUint(out, cpu_pid);
  out->append(",\"name\":\"process_name\",\"args\":{\"name\":");
  appendJsonString(out, label);
  out->append("}}");
  for (uint32_t d : devices) {
    label = "rank " + std::to_string(opt.rank) + " GPU " + std::to_string(d);
    out->append(",\n{\"ph\":\"M\",\"pid\":");
    appendUint(out, gpuPid(d));
    out->append(",\"name\":\"process_name\",\"args\":{\"name\":");
    appendJsonString(out, label);
    out->append("}}");
  }

  // Push/pop pairs, matched per thread in arrival order.
  struct Open {
    uint32_t thread, name;
    int64_t begin;
  };
  std::vector<Open> stack;
  for (const TraceEvent* ep : events) {
    const TraceEvent& e = *ep;
    if (e.type == EventType::kRangeBegin) {
      stack.push_back({e.thread, e.name, e.start_ns});
      continue;
    }
    if (e.type == EventType::kRangeEnd) {
      auto it = std::find_if(stack.rbegin(), stack.rend(), [&](const Open& o) { return o.thread == e.thread; });
      if (it == stack.rend()) continue;  // its push was overwritten
      Open o = *it;
      stack.erase(std::next(it).base());
      if (e.start_ns < lo || o.begin > hi) continue;
      open("X", cpu_pid, o.thread, names.text(o.name), o.begin);
      dur(std::max<int64_t>(0, e.start_ns - o.begin));
      out->append("}");
      continue;
    }
    int64_t t = stepTime(e);
    bool spans = e.type == EventType::kRange;
    if (spans ? (e.end_ns < lo || e.start_ns > hi) : (t < lo || t >= hi)) continue;
    switch (e.type) {
      case EventType::kKernel:
      case EventType::kMemcpy:
      case EventType::kMemset:
      case EventType::kCollective: {
        std::string_view name = names.text(e.name);
        if (e.type == EventType::kMemcpy) name = "Memcpy";
        if (e.type == EventType::kMemset) name = "Memset";
        if (e.type == EventType::kCollective && name.empty()) name = model::collectiveOpName(e.op);
        open("X", gpuPid(e.device), e.stream, name, e.start_ns);
        dur(e.end_ns - e.start_ns);
        out->append(",\"cat\":\"");
        out->append(e.type == EventType::kKernel ? "kernel" : e.type == EventType::kCollective ? "collective" : "gpu_memcpy");
        out->append("\",\"args\":{\"correlation\":");
        appendUint(out, e.correlation);
        if (e.bytes != 0) {
          out->append(",\"bytes\":");
          appendUint(out, e.bytes);
        }
        out->append("}}");
        break;
      }
      case EventType::kRange:
        open("X", cpu_pid, e.thread, names.text(e.name), e.start_ns);
        dur(e.end_ns - e.start_ns);
        out->append("}");
        break;
      case EventType::kMark:
        open("i", cpu_pid, e.thread, names.text(e.name), e.start_ns);
        out->append(",\"s\":\"t\"}");
        break;
      case EventType::kStackSample:
        open("i", cpu_pid, e.thread, "stack sample", e.start_ns);
        out->append(",\"s\":\"t\",\"args\":{\"stack_id\":");
        appendUint(out, e.id);
        out->append("}}");
        break;
      case EventType::kLaunch:
        open("i", cpu_pid, e.thread, "launch", e.start_ns);
        out->append(",\"s\":\"t\",\"args\":{\"correlation\":");
        appendUint(out, e.correlation);
        out->append("}}");
        break;
      default:
        break;
    }
  }
  // Pushes whose pop has not come (or was not kept): open slices.
  for (const Open& o : stack) {
    if (o.begin < lo || o.begin > hi) continue;
    open("B", cpu_pid, o.thread, names.text(o.name), o.begin);
    out->append("}");
  }
  out->append("\n]}\n");
  return Status::ok();
}

Status FlightRecorder::dumpToFile(const std::string& path, const NameTable& names, const ChromeTraceOptions& options) const {
  std::string json;
  Status st = writeChromeTrace(names, options, &json);
  if (!st.isOk()) return st;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return Status::ioError("flight recorder: cannot open " + path);
  bool ok = std::fwrite(json.data(), 1, json.size(), f) == json.size();
  ok = std::fclose(f) == 0 && ok;
  return ok ? Status::ok() : Status::ioError("flight recorder: cannot write " + path);
}

}  // namespace argus::capture
