// Continuous mode, deterministically: steps written one at a time, a monitor pass after
// each: when each finding appears, and that it appears once.
#include "diagnose/monitor.h"

#include <doctest/doctest.h>

#include "../../simulated_job.h"
#include "../storage/store_test_util.h"
#include "simulate/cluster_simulator.h"

using namespace argus;
using namespace argus::diagnose;

TEST_CASE("the monitor finds a straggler within 3 steps of its onset, once, as steps arrive one by one") {
  storage::testutil::TempDir dir;
  auto store = storage::testutil::openStore(dir.path(), 64);
  simulate::ClusterOptions o;
  o.layout = simulate::ClusterLayout{2, 2, 4, 4};
  o.microbatches = 4;
  o.faults = {*simulate::parseFault("compute_straggler:rank=5,at=70,for=30"), *simulate::parseFault("link_degradation:hosts=0-1,at=130,for=20")};
  auto made = simulate::ClusterSimulator::create(o, simulate::builtinKernelMix(16));
  REQUIRE(made.isOk());
  simulate::ClusterSimulator& sim = **made;
  auto id = store->ensureJob("live");
  REQUIRE(id.isOk());

  std::vector<MonitorFinding> found;
  DiagnosisMonitor monitor(*store, MonitorOptions{}, [&](const MonitorFinding& m) { found.push_back(m); });
  std::map<std::string, uint64_t> found_at;  // kind: the step written when it appeared
  for (uint64_t step = 0; step < 170; ++step) {
    sim.simulate(1);
    for (uint32_t rank = 0; rank < sim.layout().ranks(); ++rank) {
      model::StepRecord rec;
      sim.record(rank, 0, &rec);
      REQUIRE(testing::writeRankRecords(*store, *id, sim, rank, std::span(&rec, 1)).isOk());
    }
    const size_t before = found.size();
    monitor.pass();
    for (size_t i = before; i < found.size(); ++i) found_at.emplace(findingKindName(found[i].finding.kind), step);
  }
  for (const MonitorFinding& m : found) MESSAGE(std::string(findingKindName(m.finding.kind)) << " " << m.finding.from_step << " after " << m.steps_after_onset);
  REQUIRE(found_at.count("compute_straggler") == 1);
  CHECK(found_at["compute_straggler"] <= 72);  // the window opens at 71: found with step 71's records
  REQUIRE(found_at.count("link_degradation") == 1);
  CHECK(found_at["link_degradation"] <= 132);
  size_t stragglers = 0;
  for (const MonitorFinding& m : found) {
    if (m.finding.kind == FindingKind::kComputeStraggler) {
      ++stragglers;
      CHECK(m.finding.ranks == std::vector<uint32_t>{5});
      CHECK(m.steps_after_onset <= 3);
    }
  }
  CHECK(stragglers == 1);
  std::string metrics;
  monitor.writePrometheus(&metrics);
  CHECK(metrics.find("argus_diagnosis_findings_total{kind=\"compute_straggler\"} 1") != std::string::npos);
  CHECK(metrics.find("argus_diagnosis_passes_total 170") != std::string::npos);
  CHECK(metrics.find("argus_diagnosis_errors_total 0") != std::string::npos);
}
