#include "import/kineto_sax.h"

#include <xxhash.h>

#include <string_view>

#include "capture/name_rules.h"
#include "model/kernel_signature.h"

namespace argus::import {

namespace {

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool containsNoCase(std::string_view s, std::string_view needle) {
  return capture::matches(capture::MatchKind::kContains, true, needle, s);
}

// Bytes per element of the dtype names PyTorch writes in NCCL kernels' args; 0 if unknown.
uint64_t dtypeBytes(std::string_view dtype) {
  static constexpr std::pair<std::string_view, uint64_t> kSizes[] = {
      {"Float", 4},    {"Double", 8},      {"Half", 2},   {"BFloat16", 2}, {"Int", 4},
      {"Long", 8},     {"Short", 2},       {"Char", 1},   {"Byte", 1},     {"Bool", 1},
      {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1}, {"Float8_e4m3fnuz", 1}, {"Float8_e5m2fnuz", 1},
      {"ComplexFloat", 8}, {"ComplexDouble", 16}, {"UInt16", 2}, {"UInt32", 4}, {"UInt64", 8},
  };
  for (const auto& [name, bytes] : kSizes) {
    if (dtype == name) return bytes;
  }
  return 0;
}

capture::CopyKind copyKindOf(std::string_view name) {
  if (name.find("HtoD") != std::string_view::npos) return capture::CopyKind::kHtoD;
  if (name.find("DtoH") != std::string_view::npos) return capture::CopyKind::kDtoH;
  if (name.find("DtoD") != std::string_view::npos) return capture::CopyKind::kDtoD;
  if (name.find("HtoH") != std::string_view::npos) return capture::CopyKind::kHtoH;
  if (name.find("PtoP") != std::string_view::npos || name.find("Peer") != std::string_view::npos) return capture::CopyKind::kPeer;
  return capture::CopyKind::kUnknown;
}

}  // namespace

void KinetoSax::Scratch::reset() {
  cat.clear(), dtype.clear(), group.clear();
  device.reset(), stream.reset(), correlation.reset(), bytes.reset(), in_nelems.reset(), out_nelems.reset();
  for (int i = 0; i < 3; ++i) grid[i] = 0, block[i] = 0;
}

void KinetoSax::topValue(const std::string& key, const JsonScalar& v) {
  if (key != "baseTimeNanoseconds") return;
  if (v.kind == JsonScalar::kInt) base_time_ns_ = v.i;
  if (v.kind == JsonScalar::kUnsigned && v.u <= static_cast<uint64_t>(INT64_MAX)) base_time_ns_ = static_cast<int64_t>(v.u);
}

void KinetoSax::sectionValue(const std::string& section, const std::string& key, const JsonScalar& v) {
  if (section != "distributedInfo" || v.kind == JsonScalar::kString) return;
  auto n = v.asUnsigned();
  if (!n || *n > UINT32_MAX) return;
  if (key == "rank") trace_->rank = static_cast<uint32_t>(*n);
  if (key == "world_size") trace_->world_size = static_cast<uint32_t>(*n);
}

void KinetoSax::eventValue(const std::string& key, const JsonScalar& v) {
  if (key == "cat" && v.asString()) ev_.cat.assign(*v.text);
}

void KinetoSax::argsValue(const std::string& key, const JsonScalar& v) {
  std::optional<uint64_t>* slot = nullptr;
  if (key == "device") slot = &ev_.device;
  else if (key == "stream") slot = &ev_.stream;
  else if (key == "correlation") slot = &ev_.correlation;
  else if (key == "bytes") slot = &ev_.bytes;
  else if (key == "In msg nelems") slot = &ev_.in_nelems;
  else if (key == "Out msg nelems") slot = &ev_.out_nelems;
  else if (key == "dtype" && v.asString()) ev_.dtype.assign(*v.text);
  else if (key == "Process Group Name" && v.asString()) ev_.group.assign(*v.text);
  // Kineto writes these as numbers; a string here is not one of its fields.
  if (slot != nullptr) *slot = v.kind == JsonScalar::kString ? std::nullopt : v.asUnsigned();
}

void KinetoSax::argsArrayValue(const std::string& key, size_t index, const JsonScalar& v) {
  uint32_t* geometry = key == "grid" ? ev_.grid : key == "block" ? ev_.block : nullptr;
  if (geometry == nullptr || index >= 3) return;
  auto d = v.kind == JsonScalar::kString ? std::nullopt : v.asUnsigned();
  geometry[index] = d && *d <= UINT32_MAX ? static_cast<uint32_t>(*d) : 0;
}

void KinetoSax::endEvent() {
  KinetoCounts& counts = trace_->counts;
  const EventHead& ev = head();
  ++counts.trace_events;
  const std::string& cat = ev_.cat;
  bool launch = cat == "cuda_runtime" || cat == "cuda_driver";
  bool gpu = cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset";
  bool range = cat == "cpu_op" || cat == "user_annotation";
  if (!launch && !gpu && !range) return;
  if (ev.ph != "X") return;
  if (!ev.ts_ns || (!launch && (!ev.dur_ns || *ev.dur_ns < 0))) {
    ++counts.skipped;
    return;
  }
  uint32_t tid32 = static_cast<uint32_t>(ev.tid);
  if (launch) {
    if (ev_.correlation && *ev_.correlation != 0 && *ev_.correlation <= UINT32_MAX) {
      launches_.push_back({static_cast<uint32_t>(*ev_.correlation), tid32, *ev.ts_ns});
      ++counts.launches;
    }
    return;
  }
  capture::TraceEvent e;
  e.start_ns = *ev.ts_ns;
  if (__builtin_add_overflow(*ev.ts_ns, *ev.dur_ns, &e.end_ns)) {
    ++counts.skipped;
    return;
  }
  if (range) {
    e.type = capture::EventType::kRange;
    e.name = trace_->names.intern(ev.name);
    e.thread = tid32;
    if (startsWith(ev.name, "ProfilerStep#")) ++counts.step_markers;
    ++counts.ranges;
    trace_->events.push_back(e);
    return;
  }
  e.device = static_cast<uint32_t>(ev_.device.value_or(ev.pid));
  e.stream = static_cast<uint32_t>(ev_.stream.value_or(ev.tid));
  e.correlation = ev_.correlation && *ev_.correlation <= UINT32_MAX ? static_cast<uint32_t>(*ev_.correlation) : 0;
  if (cat == "kernel") {
    e.type = capture::EventType::kKernel;
    e.name = trace_->names.intern(ev.name);
    e.geometry = {ev_.grid[0], ev_.grid[1], ev_.grid[2], ev_.block[0], ev_.block[1], ev_.block[2]};
    e.id = signatureOf(e.name, e.geometry);
    ++counts.kernels;
    trace_->kernel_event_bytes += position() - ev.begin;
    if (containsNoCase(ev.name, "nccl")) {
      ++counts.nccl_kernels;
      uint64_t elem = dtypeBytes(ev_.dtype);
      uint64_t nelems = std::max(ev_.in_nelems.value_or(0), ev_.out_nelems.value_or(0));
      e.bytes = elem * nelems;
      uint64_t communicator = ev_.group.empty() ? 0 : XXH3_64bits(ev_.group.data(), ev_.group.size());
      collective_args_.push_back({trace_->events.size(), e.bytes, communicator, ev_.in_nelems.has_value() || !ev_.group.empty()});
    }
  } else {
    bool memset = cat == "gpu_memset";
    e.type = memset ? capture::EventType::kMemset : capture::EventType::kMemcpy;
    e.bytes = ev_.bytes.value_or(0);
    if (!memset) e.copy_kind = copyKindOf(ev.name);
    ++counts.copies;
  }
  trace_->events.push_back(e);
}

uint64_t KinetoSax::signatureOf(uint32_t name, const model::LaunchGeometry& geometry) {
  // Normalizing and hashing a long templated name costs far more than parsing the event:
  // each distinct (name, geometry) is hashed once.
  if (name >= signatures_.size()) signatures_.resize(name + 1);
  for (const auto& [g, sig] : signatures_[name]) {
    if (g == geometry) return sig;
  }
  uint64_t sig = model::kernelSignature(trace_->names.text(name), geometry);
  signatures_[name].push_back({geometry, sig});
  return sig;
}

}  // namespace argus::import
