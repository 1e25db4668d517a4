#include "import/kineto_sax.h"

#include <xxhash.h>

#include <cstdlib>
#include <string_view>

#include "capture/name_rules.h"
#include "import/kineto_time.h"
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

void KinetoSax::Scratch::reset(uint64_t pos) {
  ph.clear(), cat.clear(), name.clear(), dtype.clear(), group.clear();
  ts_ns.reset(), dur_ns.reset();
  tid = 0, pid = 0;
  device.reset(), stream.reset(), correlation.reset(), bytes.reset(), in_nelems.reset(), out_nelems.reset();
  for (int i = 0; i < 3; ++i) grid[i] = 0, block[i] = 0;
  begin_pos = pos;
}

namespace {

std::optional<uint64_t> asUnsigned(int kind, int64_t i, uint64_t u, const std::string* text) {
  switch (kind) {
    case 1: return i >= 0 ? std::optional<uint64_t>(static_cast<uint64_t>(i)) : std::nullopt;
    case 2: return u;
    case 3: {  // a float that holds an integer ("2.0")
      std::optional<int64_t> ns = microsTextToNs(*text);
      if (!ns || *ns < 0 || *ns % 1000 != 0) return std::nullopt;
      return static_cast<uint64_t>(*ns / 1000);
    }
    default: return std::nullopt;
  }
}

// Microseconds (a number, or a string holding one) -> ns, exactly.
std::optional<int64_t> asNs(int kind, int64_t i, uint64_t u, const std::string* text) {
  int64_t ns = 0;
  switch (kind) {
    case 1: return __builtin_mul_overflow(i, int64_t{1000}, &ns) ? std::nullopt : std::optional<int64_t>(ns);
    case 2:
      if (u > static_cast<uint64_t>(INT64_MAX) / 1000) return std::nullopt;
      return static_cast<int64_t>(u) * 1000;
    case 3:
    case 4: return microsTextToNs(*text);
    default: return std::nullopt;
  }
}

// tid / pid: a number, or a string ("stream 7", a thread name) folded to 32 bits.
uint64_t asId(int kind, int64_t i, uint64_t u, const std::string* text) {
  if (kind == 1) return static_cast<uint64_t>(i);
  if (kind == 2) return u;
  if (kind == 4) {
    const char* s = text->c_str();
    char* end = nullptr;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (end != s && *end == '\0') return v;
    return XXH3_64bits(text->data(), text->size()) & 0xffffffffu;
  }
  return 0;
}

}  // namespace

bool KinetoSax::push(Where w) {
  stack_.push_back(w);
  return true;
}

bool KinetoSax::start_object(std::size_t) {
  if (stack_.empty()) return push(Where::kTop);
  switch (stack_.back()) {
    case Where::kTop: return push(key_ == "distributedInfo" ? Where::kDistributed : Where::kSkip);
    case Where::kEvents:
      // The '{' was just consumed: the object starts one byte back.
      ev_.reset(input_->position() - 1);
      return push(Where::kEvent);
    case Where::kEvent: return push(key_ == "args" ? Where::kArgs : Where::kSkip);
    default: return push(Where::kSkip);
  }
}

bool KinetoSax::start_array(std::size_t) {
  if (stack_.empty()) {
    // A bare array of events is also Chrome's trace format.
    saw_trace_events_ = true;
    return push(Where::kEvents);
  }
  if (stack_.back() == Where::kTop && key_ == "traceEvents") {
    saw_trace_events_ = true;
    return push(Where::kEvents);
  }
  if (stack_.back() == Where::kArgs && (key_ == "grid" || key_ == "block")) {
    geometry_ = key_ == "grid" ? ev_.grid : ev_.block;
    geometry_index_ = 0;
    return push(Where::kGeometry);
  }
  return push(Where::kSkip);
}

bool KinetoSax::end_object() {
  Where w = stack_.empty() ? Where::kSkip : stack_.back();
  if (!stack_.empty()) stack_.pop_back();
  if (w == Where::kEvent) finishEvent();
  return true;
}

bool KinetoSax::end_array() {
  if (!stack_.empty()) stack_.pop_back();
  return true;
}

bool KinetoSax::key(string_t& k) {
  key_.assign(k);
  return true;
}

bool KinetoSax::parse_error(std::size_t position, const std::string& last_token, const nlohmann::detail::exception& ex) {
  // nlohmann's message already says line and column; the byte is what one seeks to.
  std::string what = ex.what();
  if (size_t p = what.find("] "); startsWith(what, "[json.exception") && p != std::string::npos) what = what.substr(p + 2);
  error_ = "not valid JSON at byte " + std::to_string(position) + ": " + what;
  return false;
}

bool KinetoSax::value(const Value& v) {
  if (stack_.empty()) {
    error_ = "not a trace: the JSON document is a single value, not an object with traceEvents";
    return false;
  }
  int kind = v.kind;
  switch (stack_.back()) {
    case Where::kTop:
      if (key_ == "baseTimeNanoseconds") {
        if (kind == Value::kInt) base_time_ns_ = v.i;
        if (kind == Value::kUnsigned && v.u <= static_cast<uint64_t>(INT64_MAX)) base_time_ns_ = static_cast<int64_t>(v.u);
      }
      break;
    case Where::kDistributed:
      if (key_ == "rank") {
        if (auto r = asUnsigned(kind, v.i, v.u, v.text); r && *r <= UINT32_MAX) trace_->rank = static_cast<uint32_t>(*r);
      } else if (key_ == "world_size") {
        if (auto w = asUnsigned(kind, v.i, v.u, v.text); w && *w <= UINT32_MAX) trace_->world_size = static_cast<uint32_t>(*w);
      }
      break;
    case Where::kEvent:
      if (key_ == "ph") {
        if (kind == Value::kString) ev_.ph.assign(*v.text);
      } else if (key_ == "cat") {
        if (kind == Value::kString) ev_.cat.assign(*v.text);
      } else if (key_ == "name") {
        if (kind == Value::kString) ev_.name.assign(*v.text);
      } else if (key_ == "ts") {
        ev_.ts_ns = asNs(kind, v.i, v.u, v.text);
      } else if (key_ == "dur") {
        ev_.dur_ns = asNs(kind, v.i, v.u, v.text);
      } else if (key_ == "tid") {
        ev_.tid = asId(kind, v.i, v.u, v.text);
      } else if (key_ == "pid") {
        ev_.pid = asId(kind, v.i, v.u, v.text);
      }
      break;
    case Where::kArgs: {
      std::optional<uint64_t>* slot = nullptr;
      if (key_ == "device") slot = &ev_.device;
      else if (key_ == "stream") slot = &ev_.stream;
      else if (key_ == "correlation") slot = &ev_.correlation;
      else if (key_ == "bytes") slot = &ev_.bytes;
      else if (key_ == "In msg nelems") slot = &ev_.in_nelems;
      else if (key_ == "Out msg nelems") slot = &ev_.out_nelems;
      else if (key_ == "dtype" && kind == Value::kString) ev_.dtype.assign(*v.text);
      else if (key_ == "Process Group Name" && kind == Value::kString) ev_.group.assign(*v.text);
      if (slot != nullptr) *slot = asUnsigned(kind, v.i, v.u, v.text);
      break;
    }
    case Where::kGeometry:
      if (geometry_index_ < 3) {
        auto d = asUnsigned(kind, v.i, v.u, v.text);
        geometry_[geometry_index_] = d && *d <= UINT32_MAX ? static_cast<uint32_t>(*d) : 0;
      }
      ++geometry_index_;
      break;
    default:
      break;
  }
  return true;
}

void KinetoSax::finishEvent() {
  KinetoCounts& counts = trace_->counts;
  ++counts.trace_events;
  const std::string& cat = ev_.cat;
  bool launch = cat == "cuda_runtime" || cat == "cuda_driver";
  bool gpu = cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset";
  bool range = cat == "cpu_op" || cat == "user_annotation";
  if (!launch && !gpu && !range) return;
  if (ev_.ph != "X") return;
  if (!ev_.ts_ns || (!launch && (!ev_.dur_ns || *ev_.dur_ns < 0))) {
    ++counts.skipped;
    return;
  }
  uint32_t tid32 = static_cast<uint32_t>(ev_.tid);
  if (launch) {
    if (ev_.correlation && *ev_.correlation != 0 && *ev_.correlation <= UINT32_MAX) {
      launches_.push_back({static_cast<uint32_t>(*ev_.correlation), tid32, *ev_.ts_ns});
      ++counts.launches;
    }
    return;
  }
  capture::TraceEvent e;
  e.start_ns = *ev_.ts_ns;
  if (__builtin_add_overflow(*ev_.ts_ns, *ev_.dur_ns, &e.end_ns)) {
    ++counts.skipped;
    return;
  }
  if (range) {
    e.type = capture::EventType::kRange;
    e.name = trace_->names.intern(ev_.name);
    e.thread = tid32;
    if (startsWith(ev_.name, "ProfilerStep#")) ++counts.step_markers;
    ++counts.ranges;
    trace_->events.push_back(e);
    return;
  }
  e.device = static_cast<uint32_t>(ev_.device.value_or(ev_.pid));
  e.stream = static_cast<uint32_t>(ev_.stream.value_or(ev_.tid));
  e.correlation = ev_.correlation && *ev_.correlation <= UINT32_MAX ? static_cast<uint32_t>(*ev_.correlation) : 0;
  if (cat == "kernel") {
    e.type = capture::EventType::kKernel;
    e.name = trace_->names.intern(ev_.name);
    e.geometry = {ev_.grid[0], ev_.grid[1], ev_.grid[2], ev_.block[0], ev_.block[1], ev_.block[2]};
    e.id = signatureOf(e.name, e.geometry);
    ++counts.kernels;
    trace_->kernel_event_bytes += input_->position() - ev_.begin_pos;
    if (containsNoCase(ev_.name, "nccl")) {
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
    if (!memset) e.copy_kind = copyKindOf(ev_.name);
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
