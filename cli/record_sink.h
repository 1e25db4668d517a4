// RecordSink: where `argus import` puts the StepRecords of one rank: argusd over the wire
// (one StepSender session per rank), or a data directory opened here. Shared by every
// importer (docs/cli/argus.md).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>

#include "base/status.h"
#include "capture/step_assembler.h"
#include "model/step_record.h"

namespace argus::cli {

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // Starts one rank's records (a session with argusd).
  virtual Status begin(const model::RankTopology& topology) = 0;
  // Registers the output's dictionary entries, then its record.
  virtual Status add(const capture::StepOutput& out) = 0;
  // Makes the rank's records durable (acked by argusd / written to the store).
  virtual Status end() = 0;
  virtual std::string where() const = 0;
};

struct SinkOptions {
  std::string job;
  std::string server;    // HOST:PORT, or
  std::string data_dir;  // a data directory (argusd must not be running on it)
  std::string token;     // auth token for argusd
};

// Exactly one of server and data_dir. The store sink seals and closes when destroyed.
Result<std::unique_ptr<RecordSink>> openSink(const SinkOptions& options);

// Replays one rank's imported events (time-sorted) through its own step assembler into
// `sink` as one session: begin(topology), each record (handed to `each` too, when given),
// end(). The first failure is the answer.
Result<capture::AssemblerStats> replayIntoSink(const capture::NameTable& names, std::span<const capture::TraceEvent> events,
                                               const capture::StepAssemblerOptions& options, const model::RankTopology& topology, RecordSink& sink,
                                               const std::function<void(const model::StepRecord&)>& each = nullptr);

}  // namespace argus::cli
