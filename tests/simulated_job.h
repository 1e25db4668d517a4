// Writes a simulated job (simulate/cluster_simulator.h) into a store, as `argus simulate
// --data` does: each rank's topology and the dictionaries with its first records, then
// sealed. For tests of the diagnosis and the query functions on it.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "simulate/cluster_simulator.h"
#include "storage/store.h"

namespace argus::testing {

// Writes `rank`'s records with its topology and the simulator's dictionaries, in one request.
inline Status writeRankRecords(storage::Store& store, storage::JobId job, const simulate::ClusterSimulator& sim, uint32_t rank,
                               std::span<const model::StepRecord> records) {
  const model::RankTopology topology = sim.layout().topology(rank);
  storage::WriteRequest w;
  w.job = job;
  w.topology = &topology;
  w.kernels = sim.kernels();
  w.stacks = sim.stacks();
  w.strings = sim.strings();
  w.records = records;
  return store.write(w);
}

// Returns the simulator (its faults resolved: the truth), or the first failure.
inline Result<std::unique_ptr<simulate::ClusterSimulator>> writeSimulatedJob(storage::Store& store, const std::string& job, simulate::ClusterOptions options,
                                                                               const std::vector<std::string>& faults, uint32_t steps) {
  for (const std::string& spec : faults) {
    Result<simulate::Fault> f = simulate::parseFault(spec);
    if (!f.isOk()) return f.status();
    options.faults.push_back(*f);
  }
  auto made = simulate::ClusterSimulator::create(options, simulate::builtinKernelMix(16));
  if (!made.isOk()) return made.status();
  simulate::ClusterSimulator& sim = **made;
  Result<storage::JobId> id = store.ensureJob(job);
  if (!id.isOk()) return id.status();
  sim.simulate(steps);
  std::vector<model::StepRecord> records(steps);
  for (uint32_t rank = 0; rank < sim.layout().ranks(); ++rank) {
    for (uint32_t i = 0; i < steps; ++i) sim.record(rank, i, &records[i]);
    ARGUS_RETURN_IF_ERROR(writeRankRecords(store, *id, sim, rank, records));
  }
  ARGUS_RETURN_IF_ERROR(store.sealAll());
  return made;
}

}  // namespace argus::testing
