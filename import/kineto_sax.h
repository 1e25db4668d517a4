// KinetoSax: the nlohmann::json SAX handler behind readKinetoTrace. It walks the document
// with a small context stack, keeps only the fields of traceEvents[] elements that the
// mapping uses (docs/import/kineto.md), and turns each finished event into a TraceEvent or
// a launch record. Strings are copied into reused buffers; nothing per event allocates
// once the buffers have grown.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "import/gzip_streambuf.h"
#include "import/kineto_trace.h"

namespace argus::import {

// A CPU-side CUDA call (cuda_runtime / cuda_driver) that GPU work points back to.
struct LaunchRecord {
  uint32_t correlation;
  uint32_t thread;
  int64_t ts_ns;
};

class KinetoSax : public nlohmann::json_sax<nlohmann::json> {
 public:
  KinetoSax(KinetoTrace* trace, const GzipStreamBuf* input) : trace_(trace), input_(input) {}

  bool null() override { return value(Value{}); }
  bool boolean(bool) override { return value(Value{}); }
  bool number_integer(number_integer_t v) override { return value(Value{Value::kInt, v, 0, nullptr}); }
  bool number_unsigned(number_unsigned_t v) override { return value(Value{Value::kUnsigned, 0, v, nullptr}); }
  bool number_float(number_float_t, const string_t& text) override { return value(Value{Value::kFloat, 0, 0, &text}); }
  bool string(string_t& s) override { return value(Value{Value::kString, 0, 0, &s}); }
  bool binary(binary_t&) override { return value(Value{}); }
  bool start_object(std::size_t) override;
  bool key(string_t& k) override;
  bool end_object() override;
  bool start_array(std::size_t) override;
  bool end_array() override;
  bool parse_error(std::size_t position, const std::string& last_token, const nlohmann::detail::exception& ex) override;

  // After parsing: whether a traceEvents array was seen, and the first error (if any).
  bool sawTraceEvents() const { return saw_trace_events_; }
  const std::string& error() const { return error_; }
  std::vector<LaunchRecord>& launches() { return launches_; }
  // NCCL kernels' collective arguments, by index into trace->events (kCollective made later).
  struct CollectiveArgs {
    size_t event;
    uint64_t bytes;
    uint64_t communicator;
    bool has_args;  // the kernel carried collective args (nelems, process group)
  };
  std::vector<CollectiveArgs>& collectiveArgs() { return collective_args_; }
  std::optional<int64_t> baseTimeNs() const { return base_time_ns_; }

 private:
  enum class Where : uint8_t { kRoot, kTop, kEvents, kEvent, kArgs, kGeometry, kDistributed, kSkip };
  struct Value {
    enum Kind : uint8_t { kOther, kInt, kUnsigned, kFloat, kString } kind = kOther;
    int64_t i = 0;
    uint64_t u = 0;
    const std::string* text = nullptr;  // kFloat: the number's text; kString: the string
  };
  // The fields of the current traceEvents[] element.
  struct Scratch {
    std::string ph, cat, name, dtype, group;
    std::optional<int64_t> ts_ns, dur_ns;
    uint64_t tid = 0, pid = 0;
    std::optional<uint64_t> device, stream, correlation, bytes, in_nelems, out_nelems;
    uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
    uint64_t begin_pos = 0;
    void reset(uint64_t pos);
  };

  bool value(const Value& v);
  bool push(Where w);
  void finishEvent();
  uint64_t signatureOf(uint32_t name, const model::LaunchGeometry& geometry);

  KinetoTrace* trace_;
  const GzipStreamBuf* input_;
  std::vector<Where> stack_;
  std::string key_;       // the last key read in the innermost object
  int geometry_index_ = 0;
  uint32_t* geometry_ = nullptr;
  Scratch ev_;
  bool saw_trace_events_ = false;
  std::string error_;
  std::optional<int64_t> base_time_ns_;
  std::vector<LaunchRecord> launches_;
  std::vector<CollectiveArgs> collective_args_;
  std::vector<std::vector<std::pair<model::LaunchGeometry, uint64_t>>> signatures_;  // by name id
};

}  // namespace argus::import
