#include "import/trace_json.h"

#include <xxhash.h>

#include <cstdlib>
#include <filesystem>
#include <istream>

#include "import/kineto_time.h"

namespace argus::import {

namespace {

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::optional<uint64_t> digits(const std::string& s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

}  // namespace

std::optional<uint64_t> JsonScalar::asUnsigned() const {
  switch (kind) {
    case kInt: return i >= 0 ? std::optional<uint64_t>(static_cast<uint64_t>(i)) : std::nullopt;
    case kUnsigned: return u;
    case kFloat: {  // a float that holds an integer ("2.0")
      std::optional<int64_t> ns = microsTextToNs(*text);
      if (!ns || *ns < 0 || *ns % 1000 != 0) return std::nullopt;
      return static_cast<uint64_t>(*ns / 1000);
    }
    case kString: return digits(*text);
    default: return std::nullopt;
  }
}

std::optional<int64_t> JsonScalar::asMicrosNs() const {
  int64_t ns = 0;
  switch (kind) {
    case kInt: return __builtin_mul_overflow(i, int64_t{1000}, &ns) ? std::nullopt : std::optional<int64_t>(ns);
    case kUnsigned:
      if (u > static_cast<uint64_t>(INT64_MAX) / 1000) return std::nullopt;
      return static_cast<int64_t>(u) * 1000;
    case kFloat:
    case kString: return microsTextToNs(*text);
    default: return std::nullopt;
  }
}

uint64_t JsonScalar::asId() const {
  if (kind == kInt) return static_cast<uint64_t>(i);
  if (kind == kUnsigned) return u;
  if (kind == kString) {
    if (auto v = digits(*text)) return *v;
    return XXH3_64bits(text->data(), text->size()) & 0xffffffffu;
  }
  return 0;
}

bool TraceJsonSax::push(Where w) {
  stack_.push_back(w);
  return true;
}

bool TraceJsonSax::start_object(std::size_t) {
  if (stack_.empty()) return push(Where::kTop);
  switch (stack_.back()) {
    case Where::kTop:
      section_.assign(key_);
      return push(Where::kSection);
    case Where::kEvents:
      head_.ph.clear(), head_.name.clear(), head_.pid_text.clear(), head_.tid_text.clear();
      head_.ts_ns.reset(), head_.dur_ns.reset();
      head_.pid = 0, head_.tid = 0;
      head_.begin = position() - 1;  // the '{' was just consumed
      beginEvent();
      return push(Where::kEvent);
    case Where::kEvent: return push(key_ == "args" ? Where::kArgs : Where::kSkip);
    default: return push(Where::kSkip);
  }
}

bool TraceJsonSax::start_array(std::size_t) {
  if (stack_.empty() || (stack_.back() == Where::kTop && key_ == "traceEvents")) {
    // A bare array of events is also Chrome's trace format.
    saw_trace_events_ = true;
    return push(Where::kEvents);
  }
  if (stack_.back() == Where::kArgs) {
    array_.assign(key_);
    array_index_ = 0;
    return push(Where::kArgsArray);
  }
  return push(Where::kSkip);
}

bool TraceJsonSax::end_object() {
  Where w = stack_.empty() ? Where::kSkip : stack_.back();
  if (!stack_.empty()) stack_.pop_back();
  if (w == Where::kEvent) endEvent();
  return true;
}

bool TraceJsonSax::end_array() {
  if (!stack_.empty()) stack_.pop_back();
  return true;
}

bool TraceJsonSax::key(string_t& k) {
  key_.assign(k);
  return true;
}

bool TraceJsonSax::parse_error(std::size_t position, const std::string& last_token, const nlohmann::detail::exception& ex) {
  // nlohmann's message already says line and column; the byte is what one seeks to.
  std::string what = ex.what();
  if (size_t p = what.find("] "); startsWith(what, "[json.exception") && p != std::string::npos) what = what.substr(p + 2);
  error_ = "not valid JSON at byte " + std::to_string(position) + ": " + what;
  return false;
}

bool TraceJsonSax::value(const JsonScalar& v) {
  if (stack_.empty()) {
    error_ = "not a trace: the JSON document is a single value, not an object with traceEvents";
    return false;
  }
  switch (stack_.back()) {
    case Where::kTop: topValue(key_, v); break;
    case Where::kSection: sectionValue(section_, key_, v); break;
    case Where::kEvent: headValue(v); break;
    case Where::kArgs: argsValue(key_, v); break;
    case Where::kArgsArray: argsArrayValue(array_, array_index_++, v); break;
    default: break;
  }
  return true;
}

void TraceJsonSax::headValue(const JsonScalar& v) {
  if (key_ == "ph") {
    if (v.asString()) head_.ph.assign(*v.text);
  } else if (key_ == "name") {
    if (v.asString()) head_.name.assign(*v.text);
  } else if (key_ == "ts") {
    head_.ts_ns = v.asMicrosNs();
  } else if (key_ == "dur") {
    head_.dur_ns = v.asMicrosNs();
  } else if (key_ == "pid" || key_ == "tid") {
    bool pid = key_ == "pid";
    (pid ? head_.pid : head_.tid) = v.asId();
    if (v.asString() && !v.asUnsigned()) (pid ? head_.pid_text : head_.tid_text).assign(*v.text);
  } else {
    eventValue(key_, v);
  }
}

Result<TraceFileFacts> streamTraceJson(const std::string& path, TraceJsonSax* sax, std::string_view kind) {
  GzipStreamBuf input;
  if (!input.open(path)) return Status::ioError(path + ": " + input.error());
  sax->attach(&input);
  std::istream stream(&input);
  bool parsed = nlohmann::json::sax_parse(stream, sax);
  sax->attach(nullptr);
  auto gzipError = [&] {
    return Status::corruption(path + ": truncated or corrupt gzip stream after " + std::to_string(input.position()) +
                              " bytes of JSON (compressed byte " + std::to_string(input.compressedPosition()) + "): " + input.error());
  };
  if (!input.error().empty()) return gzipError();
  if (!parsed) {
    std::string why = sax->error().empty() ? "parse stopped at byte " + std::to_string(input.position()) : sax->error();
    return Status::corruption(path + ": " + why);
  }
  input.drain();  // a gzip trailer cut off after the JSON still is a broken file
  if (!input.error().empty()) return gzipError();
  if (!sax->sawTraceEvents()) {
    return Status::invalidArgument(path + ": not a " + std::string(kind) + ": no traceEvents array in " + std::to_string(input.position()) +
                                   " bytes of JSON");
  }
  TraceFileFacts facts;
  facts.raw_bytes = input.position();
  facts.gzipped = input.gzipped();
  std::error_code ec;
  facts.file_bytes = std::filesystem::file_size(path, ec);
  if (ec) facts.file_bytes = 0;
  return facts;
}

}  // namespace argus::import
