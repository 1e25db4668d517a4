// ClusterSink: where `argus simulate` puts a whole job's records, a block of steps at a
// time: argusd over the wire (one StepSender session per rank, all open at once, as the
// job's capture shims would be), or a data directory opened here (docs/cli/simulate.md).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "base/status.h"
#include "cli/record_sink.h"
#include "model/step_record.h"
#include "simulate/cluster_simulator.h"

namespace argus::cli {

class ClusterSink {
 public:
  virtual ~ClusterSink() = default;
  // Rank `rank`'s records of one block, in step order. Calls for different ranks may run
  // at once; a rank's calls come one at a time.
  virtual Status write(uint32_t rank, std::span<const model::StepRecord> records) = 0;
  // After each block: lets the store seal the blocks of steps that are complete.
  virtual Status blockDone() = 0;
  // Makes every record durable: acknowledged by argusd, or sealed in the store.
  virtual Status finish() = 0;
  virtual std::string where() const = 0;
};

// Runs `steps` steps of the simulator into the sink, `block` steps at a time, building
// records on `threads` threads, then finish()es the sink. `steps_per_second` > 0 paces the
// blocks like a training job's steps (a block is written when its last step would end).
Status runSimulation(simulate::ClusterSimulator& sim, ClusterSink& sink, uint64_t steps, uint32_t block, unsigned threads, double steps_per_second = 0);

// Exactly one of options.server and options.data_dir. Every rank's topology and the
// simulator's dictionaries go with its first records.
Result<std::unique_ptr<ClusterSink>> openClusterSink(const SinkOptions& options, const simulate::ClusterSimulator& sim);

}  // namespace argus::cli
