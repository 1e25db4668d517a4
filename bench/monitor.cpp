// bench_monitor: continuous mode's own cost at scale, without a load generator on the same
// cores. A simulated job (tensor-parallel 8 x pipeline 4 x the rest, a compute straggler and
// then a link degradation, as bench/continuous.sh streams) is written into a store a step at
// a time, every rank's record as ingest's committer writes it (encoded as its shim sends
// it, delta chains and all, one head entry per record), each rank then told to the
// monitor as durable; after each step one monitor pass (what argusd's monitor thread runs
// once every rank has the step). Prints, side by side, the time to write a step (ingest's
// share) and the pass after it (the monitor's), and for each finding the step whose records
// it came with and its lag. The lag a live job sees is this pass plus ingest's latency.
// Generating each step's records is not timed: in a cluster the training hosts do it.
//
// Blocks are sealed once the next has begun, as argusd's sealer would.
//
//   bench_monitor [ranks=10240] [steps=150] [block=256] [dir=/tmp/argus-bench-monitor]
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "bench/query_store.h"
#include "cli/trace_kernel_mix.h"
#include "diagnose/monitor.h"
#include "model/step_chain.h"
#include "simulate/cluster_simulator.h"
#include "storage/head_entry.h"
#include "storage/store.h"

using namespace argus;

namespace {

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

}  // namespace

int main(int argc, char** argv) {
  bench::Args args(argc, argv, "bench_monitor [ranks=10240] [steps=150] [block=256] [dir=/tmp/argus-bench-monitor]");
  const auto ranks = static_cast<uint32_t>(args.num("ranks", 10240));
  const auto steps = static_cast<uint64_t>(args.num("steps", 150));
  const std::string dir = args.str("dir", "/tmp/argus-bench-monitor");
  storage::StoreOptions store_options;
  store_options.block_steps = static_cast<uint32_t>(args.num("block", store_options.block_steps));
  if (ranks < 64 || ranks % 32 != 0 || steps < 120) {
    std::fprintf(stderr, "ranks: a multiple of 32, at least 64; steps: at least 120 (warm-up and baseline before the faults)\n");
    return 2;
  }
  simulate::ClusterOptions c;
  c.layout = simulate::ClusterLayout{8, 4, ranks / 32, 8};
  const uint64_t straggle_at = steps / 2 - 5, link_at = steps * 3 / 4 - 2;
  const uint32_t host = ranks / 32;
  for (const std::string& spec : {"compute_straggler:rank=" + std::to_string(ranks * 3 / 5) + ",at=" + std::to_string(straggle_at) + ",for=30",
                                  "link_degradation:hosts=" + std::to_string(host) + "-" + std::to_string(host + 1) + ",at=" + std::to_string(link_at) + ",for=30"}) {
    c.faults.push_back(*simulate::parseFault(spec));
  }
  Result<simulate::KernelMix> mix = cli::defaultKernelMix(64);
  auto made = mix.isOk() ? simulate::ClusterSimulator::create(c, std::move(mix).value()) : Result<std::unique_ptr<simulate::ClusterSimulator>>(mix.status());
  if (!made.isOk()) {
    std::fprintf(stderr, "simulator: %s\n", made.status().toString().c_str());
    return 1;
  }
  simulate::ClusterSimulator& sim = **made;

  std::filesystem::remove_all(dir);
  auto opened = storage::Store::open(dir, store_options);
  if (!opened.isOk()) {
    std::fprintf(stderr, "open %s: %s\n", dir.c_str(), opened.status().toString().c_str());
    return 1;
  }
  storage::Store& store = **opened;
  const storage::JobId job = *store.ensureJob("live");

  std::vector<diagnose::MonitorFinding> found;
  std::vector<uint64_t> found_with;  // the step whose pass recorded each
  std::vector<double> found_pass_s;  // and that pass's time
  diagnose::DiagnosisMonitor monitor(store, diagnose::MonitorOptions{}, [&](const diagnose::MonitorFinding& m) { found.push_back(m); });
  std::vector<model::StepRecord> records(ranks);
  // Each rank's session: records encoded as its shim sends them (delta chains cut every
  // model::kChainSteps steps) and stored as they arrived, one head entry per record.
  std::vector<model::ChainedStepEncoder> encoders;  // each its own history: not copies of one
  for (uint32_t rank = 0; rank < ranks; ++rank) encoders.emplace_back(model::StepCodecOptions{}, store.blockSteps());
  std::vector<uint64_t> sessions(ranks);
  for (uint64_t& session : sessions) session = store.newSessionId();
  std::vector<std::string> values(ranks);
  std::vector<storage::EncodedEntry> entries(ranks);
  std::vector<model::StepSummary> summaries(ranks);  // what the committer tells the monitor
  std::string encoded;
  std::vector<double> write_s, pass_s, seal_s;
  for (uint64_t step = 0; step < steps; ++step) {
    sim.simulate(1);
    for (uint32_t rank = 0; rank < ranks; ++rank) {
      model::StepRecord& r = records[rank];
      sim.record(rank, 0, &r);
      encoded.clear();
      encoders[rank].encode(r, &encoded);
      values[rank].clear();
      storage::beginHeadEntry(&values[rank]);
      storage::appendHeadRecord(&values[rank], encoded, r);
      entries[rank] = {rank, r.step - r.step % store.blockSteps(), sessions[rank], step + 1, values[rank]};
    }
    std::vector<storage::WriteRequest> requests(ranks);
    std::vector<model::RankTopology> topologies(step == 0 ? ranks : 0);
    for (uint32_t rank = 0; rank < ranks; ++rank) {
      storage::WriteRequest& w = requests[rank];
      w.job = job;
      if (step == 0) {  // a session's first write: where the rank sits, and the dictionaries
        topologies[rank] = sim.layout().topology(rank);
        w.topology = &topologies[rank];
        w.kernels = sim.kernels();
        w.stacks = sim.stacks();
        w.strings = sim.strings();
      }
      w.entries = std::span(&entries[rank], 1);
    }
    // One group commit for the step (the committer groups what arrived together).
    const auto t0 = bench::Clock::now();
    if (Status s = store.writeGroup(requests); !s.isOk()) {
      std::fprintf(stderr, "write: %s\n", s.toString().c_str());
      return 1;
    }
    for (uint32_t rank = 0; rank < ranks; ++rank) summaries[rank] = model::summarize(records[rank]);
    monitor.noteDurable(job, summaries);
    const auto t1 = bench::Clock::now();
    const size_t before = found.size();
    monitor.pass();
    const double pass = std::chrono::duration<double>(bench::Clock::now() - t1).count();
    write_s.push_back(std::chrono::duration<double>(t1 - t0).count());
    if (found.size() == before) pass_s.push_back(pass);
    // A block's records are sealed once the next block has begun (argusd's sealer).
    if (step % store_options.block_steps == 0 && step > 0) {
      const auto t2 = bench::Clock::now();
      if (Status s = store.sealReady(); !s.isOk()) {
        std::fprintf(stderr, "seal: %s\n", s.toString().c_str());
        return 1;
      }
      seal_s.push_back(std::chrono::duration<double>(bench::Clock::now() - t2).count());
    }
    found_with.resize(found.size(), step);
    found_pass_s.resize(found.size(), pass);
  }

  std::printf("%u ranks x %llu steps, a step at a time; medians and the 99th percentile over the steps\n\n", ranks, static_cast<unsigned long long>(steps));
  std::printf("%-52s %9s %9s %9s %9s\n", "per step", "p50 s", "p99 s", "max s", "ratio");
  const double w50 = percentile(write_s, 0.5);
  std::printf("%-52s %9.4f %9.4f %9.4f %8.2fx\n", "write the step: one group commit of every rank", w50, percentile(write_s, 0.99),
              percentile(write_s, 1), 1.0);
  std::printf("%-52s %9.4f %9.4f %9.4f %8.2fx\n", "monitor pass, no new finding", percentile(pass_s, 0.5), percentile(pass_s, 0.99),
              percentile(pass_s, 1), percentile(pass_s, 0.5) / w50);
  if (!seal_s.empty()) {
    std::printf("%-52s %9.4f %9.4f %9.4f %8.2fx\n", "seal the block before (once a block)", percentile(seal_s, 0.5), percentile(seal_s, 0.99),
                percentile(seal_s, 1), percentile(seal_s, 0.5) / w50);
  }
  std::printf("\n%-20s %6s %11s %18s %8s %8s %8s\n", "finding", "onset", "with step", "steps after onset", "lag s", "pass s", "ratio");
  for (size_t i = 0; i < found.size(); ++i) {
    const diagnose::MonitorFinding& m = found[i];
    std::printf("%-20s %6llu %11llu %18llu %8.3f %8.3f %7.2fx\n", diagnose::findingKindName(m.finding.kind), static_cast<unsigned long long>(m.finding.from_step),
                static_cast<unsigned long long>(found_with[i]), static_cast<unsigned long long>(m.steps_after_onset), m.lag_s, found_pass_s[i],
                found_pass_s[i] / w50);
  }
  std::printf("\ninjected: compute_straggler on rank %u at step %llu, link_degradation between hosts %u and %u at step %llu\n", ranks * 3 / 5,
              static_cast<unsigned long long>(straggle_at), host, host + 1, static_cast<unsigned long long>(link_at));
  std::printf("target: a finding at most 3 steps after its onset and within 3 s of its steps' records\n");
  std::filesystem::remove_all(dir);
  return 0;
}
