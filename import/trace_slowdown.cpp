#include "import/trace_slowdown.h"

#include <cmath>
#include <map>
#include <utility>

#include "import/kineto_reader.h"

namespace argus::import {

namespace {

bool ncclKernel(std::string_view name) { return name.substr(0, 4) == "nccl" || name.substr(0, 4) == "NCCL"; }

}  // namespace

size_t slowComputeKernels(const capture::NameTable& names, double factor, std::vector<capture::TraceEvent>& events) {
  // Events are in time order within a stream, so each stream's shift only grows.
  std::map<std::pair<uint32_t, uint32_t>, int64_t> shift;  // (device, stream): ns added so far
  size_t stretched = 0;
  for (capture::TraceEvent& e : events) {
    if (!e.isGpuActivity()) continue;
    int64_t& by = shift[{e.device, e.stream}];
    const int64_t length = e.end_ns - e.start_ns;
    e.start_ns += by;
    e.end_ns += by;
    if (e.type != capture::EventType::kKernel || ncclKernel(names.text(e.name))) continue;
    const auto extra = static_cast<int64_t>(std::llround(static_cast<double>(length) * (factor - 1)));
    e.end_ns += extra;
    by += extra;
    ++stretched;
  }
  orderForReplay(events);
  return stretched;
}

}  // namespace argus::import
