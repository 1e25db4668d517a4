// KinetoSax: the SAX handler behind readKinetoTrace. On the shared walk (TraceJsonSax) it
// keeps only the fields of traceEvents[] elements that the mapping uses
// (docs/import/kineto.md), and turns each finished event into a TraceEvent or a launch
// record. Strings are copied into reused buffers; nothing per event allocates
// once the buffers have grown.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "import/kineto_trace.h"
#include "import/trace_json.h"

namespace argus::import {

// A CPU-side CUDA call (cuda_runtime / cuda_driver) that GPU work points back to.
struct LaunchRecord {
  uint32_t correlation;
  uint32_t thread;
  int64_t ts_ns;
};

class KinetoSax : public TraceJsonSax {
 public:
  explicit KinetoSax(KinetoTrace* trace) : trace_(trace) {}

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

 protected:
  void topValue(const std::string& key, const JsonScalar& v) override;
  void sectionValue(const std::string& section, const std::string& key, const JsonScalar& v) override;
  void beginEvent() override { ev_.reset(); }
  void eventValue(const std::string& key, const JsonScalar& v) override;
  void argsValue(const std::string& key, const JsonScalar& v) override;
  void argsArrayValue(const std::string& key, size_t index, const JsonScalar& v) override;
  void endEvent() override;

 private:
  // The fields of the current traceEvents[] element beyond the head.
  struct Scratch {
    std::string cat, dtype, group;
    std::optional<uint64_t> device, stream, correlation, bytes, in_nelems, out_nelems;
    uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
    void reset();
  };

  uint64_t signatureOf(uint32_t name, const model::LaunchGeometry& geometry);

  KinetoTrace* trace_;
  Scratch ev_;
  std::optional<int64_t> base_time_ns_;
  std::vector<LaunchRecord> launches_;
  std::vector<CollectiveArgs> collective_args_;
  std::vector<std::vector<std::pair<model::LaunchGeometry, uint64_t>>> signatures_;  // by name id
};

}  // namespace argus::import
