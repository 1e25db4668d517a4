// TraceJsonSax and streamTraceJson: the part of reading a Chrome-trace JSON file that every
// importer shares (Kineto, generic Chrome traces; docs/import/kineto.md, docs/import/chrome.md).
//
// streamTraceJson pushes a plain or gzipped file through a 256 KB buffer into
// nlohmann::json::sax_parse: no DOM, no copy of the JSON. TraceJsonSax walks the document
// with a small context stack, reads the fields every event has (ph, name, ts, dur, pid,
// tid) into an EventHead, and hands the importer only the other scalars it may care about:
// top-level fields, fields of objects directly under the top ("distributedInfo"), and for
// each element of traceEvents[] its other fields, its args' fields and the elements of
// arrays directly inside args. Everything deeper is skipped without allocation.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "import/gzip_streambuf.h"

namespace argus::import {

// One scalar as the parser hands it over. Numbers that may be times keep their text: a
// double cannot hold 1.6e15 us to the ns (import/kineto_time.h converts the text).
struct JsonScalar {
  enum Kind : uint8_t { kOther, kInt, kUnsigned, kFloat, kString } kind = kOther;
  int64_t i = 0;
  uint64_t u = 0;
  const std::string* text = nullptr;  // kFloat: the number's text; kString: the string

  // A non-negative integer: an integer number, a float holding one ("2.0"), or a string of
  // decimal digits ("12"); nullopt otherwise.
  std::optional<uint64_t> asUnsigned() const;
  // Microseconds (a number, or a string holding one) -> ns, exactly; nullopt when not a
  // number or out of int64.
  std::optional<int64_t> asMicrosNs() const;
  // A pid / tid: the number, or a string of digits, or any other string folded to 32 bits
  // (XXH3); 0 for other kinds.
  uint64_t asId() const;
  const std::string* asString() const { return kind == kString ? text : nullptr; }
};

struct TraceFileFacts {
  uint64_t raw_bytes = 0;   // uncompressed JSON bytes
  uint64_t file_bytes = 0;  // bytes on disk (0 when unknown)
  bool gzipped = false;
};

class TraceJsonSax : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool null() final { return value(JsonScalar{}); }
  bool boolean(bool) final { return value(JsonScalar{}); }
  bool number_integer(number_integer_t v) final { return value(JsonScalar{JsonScalar::kInt, v, 0, nullptr}); }
  bool number_unsigned(number_unsigned_t v) final { return value(JsonScalar{JsonScalar::kUnsigned, 0, v, nullptr}); }
  bool number_float(number_float_t, const string_t& text) final { return value(JsonScalar{JsonScalar::kFloat, 0, 0, &text}); }
  bool string(string_t& s) final { return value(JsonScalar{JsonScalar::kString, 0, 0, &s}); }
  bool binary(binary_t&) final { return value(JsonScalar{}); }
  bool start_object(std::size_t) final;
  bool key(string_t& k) final;
  bool end_object() final;
  bool start_array(std::size_t) final;
  bool end_array() final;
  bool parse_error(std::size_t position, const std::string& last_token, const nlohmann::detail::exception& ex) final;

  // After parsing: whether a traceEvents array was seen, and the first error (if any).
  bool sawTraceEvents() const { return saw_trace_events_; }
  const std::string& error() const { return error_; }
  // The input whose byte positions the hooks see (streamTraceJson sets it).
  void attach(const GzipStreamBuf* input) { input_ = input; }

 protected:
  // The fields every Chrome-trace event has, as the walk read them for the current
  // traceEvents[] element (reset at its '{'; complete at endEvent).
  struct EventHead {
    std::string ph, name;                  // "" when absent or not a string
    std::optional<int64_t> ts_ns, dur_ns;  // JsonScalar::asMicrosNs
    uint64_t pid = 0, tid = 0;             // JsonScalar::asId
    std::string pid_text, tid_text;        // a pid / tid that is a string but no number ("rank 3")
    uint64_t begin = 0;                    // byte offset of the element's '{'
  };
  const EventHead& head() const { return head_; }

  // The hooks. `key` is the field's name; values of other shapes never reach them.
  virtual void topValue(const std::string& key, const JsonScalar& v) {}
  virtual void sectionValue(const std::string& section, const std::string& key, const JsonScalar& v) {}
  virtual void beginEvent() = 0;
  // Fields of the element other than the head's.
  virtual void eventValue(const std::string& key, const JsonScalar& v) {}
  virtual void argsValue(const std::string& key, const JsonScalar& v) = 0;
  virtual void argsArrayValue(const std::string& key, size_t index, const JsonScalar& v) {}
  virtual void endEvent() = 0;
  // Uncompressed bytes consumed so far (inside endEvent: just past the element's '}').
  uint64_t position() const { return input_ != nullptr ? input_->position() : 0; }

 private:
  void headValue(const JsonScalar& v);

  enum class Where : uint8_t { kTop, kSection, kEvents, kEvent, kArgs, kArgsArray, kSkip };
  bool value(const JsonScalar& v);
  bool push(Where w);

  const GzipStreamBuf* input_ = nullptr;
  std::vector<Where> stack_;
  std::string key_;      // the last key read in the innermost object
  std::string section_;  // key of the top-level object being read (kSection)
  std::string array_;    // key of the args array being read (kArgsArray)
  size_t array_index_ = 0;
  EventHead head_;
  bool saw_trace_events_ = false;
  std::string error_;
};

// Streams `path` (plain or gzip, detected by content) through `sax`. Returns the file's
// facts, or an error naming the file and a byte position: unreadable file, truncated or
// corrupt gzip, malformed JSON, or JSON that is not a trace (no traceEvents array; the
// message says "not a <kind>").
Result<TraceFileFacts> streamTraceJson(const std::string& path, TraceJsonSax* sax, std::string_view kind);

}  // namespace argus::import
