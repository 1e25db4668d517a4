// Continuous mode, deterministically: steps written one at a time, a monitor pass after
// each: when each finding appears, and that it appears once.
#include "diagnose/monitor.h"

#include <doctest/doctest.h>

#include <optional>
#include <thread>

#include "../../simulated_job.h"
#include "../storage/store_test_util.h"
#include "simulate/cluster_simulator.h"

using namespace argus;
using namespace argus::diagnose;

namespace {

// A 16-rank job with a compute straggler on rank 5 from step 70 for 30 steps, written into
// the store a step at a time.
class StragglerJob {
 public:
  StragglerJob(storage::Store& store, const std::string& name) : store_(store) {
    simulate::ClusterOptions o;
    o.layout = simulate::ClusterLayout{2, 2, 4, 4};
    o.microbatches = 4;
    o.faults = {*simulate::parseFault("compute_straggler:rank=5,at=70,for=30")};
    auto made = simulate::ClusterSimulator::create(o, simulate::builtinKernelMix(16));
    REQUIRE(made.isOk());
    sim_ = std::move(*made);
    auto id = store.ensureJob(name);
    REQUIRE(id.isOk());
    id_ = *id;
  }
  // The next step of every rank (but `skip`); each rank's told to `notify` as durable.
  void writeStep(DiagnosisMonitor* notify = nullptr, std::optional<uint32_t> skip = std::nullopt) {
    sim_->simulate(1);
    for (uint32_t rank = 0; rank < sim_->layout().ranks(); ++rank) {
      if (rank == skip) continue;
      model::StepRecord rec;
      sim_->record(rank, 0, &rec);
      REQUIRE(testing::writeRankRecords(store_, id_, *sim_, rank, std::span(&rec, 1)).isOk());
      const model::StepSummary told = model::summarize(rec);
      if (notify != nullptr) notify->noteDurable(id_, std::span(&told, 1));
    }
  }

 private:
  storage::Store& store_;
  std::unique_ptr<simulate::ClusterSimulator> sim_;
  storage::JobId id_ = 0;
};

// A sample's value in the monitor's /metrics text: "argus_diagnosis_passes_total", or with
// its labels.
double metric(const DiagnosisMonitor& monitor, const std::string& sample) {
  std::string text;
  monitor.writePrometheus(&text);
  const std::string key = "\n" + sample + " ";
  const size_t at = text.find(key);
  REQUIRE_MESSAGE(at != std::string::npos, sample);
  return std::stod(text.substr(at + key.size()));
}

}  // namespace

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
  size_t stragglers = 0, links = 0;
  for (const MonitorFinding& m : found) {
    // Once, though later passes see more of the link's ranks.
    if (m.finding.kind == FindingKind::kLinkDegradation) ++links;
    if (m.finding.kind == FindingKind::kComputeStraggler) {
      ++stragglers;
      CHECK(m.finding.ranks == std::vector<uint32_t>{5});
      CHECK(m.steps_after_onset <= 3);
    }
  }
  CHECK(stragglers == 1);
  CHECK(links == 1);
  std::string metrics;
  monitor.writePrometheus(&metrics);
  CHECK(metrics.find("argus_diagnosis_findings_total{kind=\"compute_straggler\"} 1") != std::string::npos);
  CHECK(metrics.find("argus_diagnosis_passes_total 170") != std::string::npos);
  CHECK(metrics.find("argus_diagnosis_errors_total 0") != std::string::npos);
  // No notices: every step read from the store.
  CHECK(metrics.find("argus_diagnosis_steps_fed_total{source=\"notices\"} 0\n") != std::string::npos);
  CHECK(metrics.find("argus_diagnosis_steps_fed_total{source=\"store\"} 170\n") != std::string::npos);

  // Each finding was recorded in the store as it was handed on, with its window's clock.
  auto recorded = store->findings("live");
  REQUIRE(recorded.isOk());
  REQUIRE(recorded->size() == found.size());
  for (size_t i = 0; i < found.size(); ++i) {
    RecordedFinding r;
    REQUIRE(decodeRecordedFinding((*recorded)[i], &r).isOk());
    CHECK(r.finding.kind == found[i].finding.kind);
    CHECK(r.finding.ranks == found[i].finding.ranks);
    CHECK(r.finding.evidence == found[i].finding.evidence);
    CHECK(r.steps_after_onset == found[i].steps_after_onset);
    CHECK(r.detected_ns == found[i].detected_ns);
    CHECK(r.finding.from_ns > 0);
    CHECK(r.finding.to_ns > r.finding.from_ns);
  }
  // A restarted monitor reads the job's history again: it finds the same, records nothing new.
  std::vector<MonitorFinding> again;
  DiagnosisMonitor restarted(*store, MonitorOptions{}, [&](const MonitorFinding& m) { again.push_back(m); });
  restarted.pass();
  CHECK(again.empty());
  CHECK(store->findings("live")->size() == found.size());
}

TEST_CASE("a recorded finding decodes to what was encoded; damage is an error, never a crash") {
  RecordedFinding r;
  r.finding.kind = FindingKind::kLinkDegradation;
  r.finding.from_step = 130;
  r.finding.to_step = 149;
  r.finding.from_ns = 1'700'000'000'000'000'000;
  r.finding.to_ns = 1'700'000'000'500'000'000;
  r.finding.ranks = {8, 9};
  r.finding.pp_rank = 0;
  r.finding.link = "node-00000/node-00001";
  r.finding.slowdown = 2.5;
  r.finding.confidence = 0.7;
  r.finding.evidence = "2 transfers of 2 ranks across node-00000/node-00001 move 10.0 GB/s against 35.0 GB/s before";
  r.detected_ns = 1'700'000'001'000'000'000;
  r.steps_after_onset = 2;
  r.lag_s = 0.25;
  const std::string value = encodeRecordedFinding(r);
  RecordedFinding back;
  REQUIRE(decodeRecordedFinding(value, &back).isOk());
  CHECK(back.finding.kind == r.finding.kind);
  CHECK(back.finding.from_step == 130);
  CHECK(back.finding.to_step == 149);
  CHECK(back.finding.from_ns == r.finding.from_ns);
  CHECK(back.finding.to_ns == r.finding.to_ns);
  CHECK(back.finding.ranks == r.finding.ranks);
  CHECK(back.finding.pp_rank == std::optional<uint32_t>(0));
  CHECK(back.finding.link == r.finding.link);
  CHECK(back.finding.kernel.empty());
  CHECK(back.finding.slowdown == 2.5);
  CHECK(back.finding.confidence == 0.7);
  CHECK(back.finding.evidence == r.finding.evidence);
  CHECK(back.detected_ns == r.detected_ns);
  CHECK(back.steps_after_onset == 2);
  CHECK(back.lag_s == 0.25);
  // Every truncation, a version from the future, an unknown kind, bytes past the end.
  for (size_t n = 0; n < value.size(); ++n) CHECK_FALSE(decodeRecordedFinding(value.substr(0, n), &back).isOk());
  std::string future = value;
  future[0] = 2;
  CHECK(decodeRecordedFinding(future, &back).message().find("version 2") != std::string::npos);
  std::string kind = value;
  kind[1 + 9] = 42;  // after the version byte and the 9-byte zigzag varint of detected_ns
  CHECK_FALSE(decodeRecordedFinding(kind, &back).isOk());
  CHECK_FALSE(decodeRecordedFinding(value + "x", &back).isOk());
}

TEST_CASE("a pass starts once every rank has made the awaited step durable, not an interval later") {
  storage::testutil::TempDir dir;
  auto store = storage::testutil::openStore(dir.path(), 64);
  simulate::ClusterOptions o;
  o.layout = simulate::ClusterLayout{2, 2, 1, 4};  // 4 ranks
  auto made = simulate::ClusterSimulator::create(o, simulate::builtinKernelMix(8));
  REQUIRE(made.isOk());
  simulate::ClusterSimulator& sim = **made;
  auto id = store->ensureJob("live");
  REQUIRE(id.isOk());
  const uint32_t ranks = sim.layout().ranks();
  auto write = [&](uint32_t rank) {  // what the committer tells of it
    model::StepRecord rec;
    sim.record(rank, 0, &rec);
    REQUIRE(testing::writeRankRecords(*store, *id, sim, rank, std::span(&rec, 1)).isOk());
    return std::vector<model::StepSummary>{model::summarize(rec)};
  };

  MonitorOptions options;
  options.interval = std::chrono::hours(1);  // no pass but the first would come from the clock
  DiagnosisMonitor monitor(*store, options, nullptr);
  auto passes = [&] { return static_cast<uint64_t>(metric(monitor, "argus_diagnosis_passes_total")); };
  auto waitForPasses = [&](uint64_t n) {
    for (int i = 0; i < 1000 && passes() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return passes();
  };
  monitor.start();
  REQUIRE(waitForPasses(1) == 1);  // the first pass, at start: no steps yet

  // A job no pass has seen: its first notice wakes one, which learns its ranks and feeds
  // step 0 (written on every rank before the notices).
  sim.simulate(1);
  std::vector<std::vector<model::StepSummary>> told;
  for (uint32_t rank = 0; rank < ranks; ++rank) told.push_back(write(rank));
  for (uint32_t rank = 0; rank < ranks; ++rank) monitor.noteDurable(*id, told[rank]);
  REQUIRE(waitForPasses(2) >= 2);
  // That pass may have run before the other ranks' notices came, which then made step 0
  // complete: one more pass. Let it run before counting.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const uint64_t settled = passes();
  REQUIRE(settled <= 3);

  // Step 1 on every rank but the last: no pass. The last one: a pass at once.
  sim.simulate(1);
  for (uint32_t rank = 0; rank + 1 < ranks; ++rank) monitor.noteDurable(*id, write(rank));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(passes() == settled);
  monitor.noteDurable(*id, write(ranks - 1));
  CHECK(waitForPasses(settled + 1) == settled + 1);
  monitor.stop();
}

TEST_CASE("a job dropped and created again under its name is watched afresh") {
  storage::testutil::TempDir dir;
  auto store = storage::testutil::openStore(dir.path(), 64);
  std::vector<MonitorFinding> found;
  DiagnosisMonitor monitor(*store, MonitorOptions{}, [&](const MonitorFinding& m) { found.push_back(m); });
  // The same job twice: 110 steps with a straggler from step 70, a pass after each step.
  auto stream = [&] {
    StragglerJob job(*store, "again");
    for (uint64_t step = 0; step < 110; ++step) {
      job.writeStep();
      monitor.pass();
    }
  };
  auto stragglers = [&] {
    return std::count_if(found.begin(), found.end(), [](const MonitorFinding& m) { return m.finding.kind == FindingKind::kComputeStraggler; });
  };
  stream();
  REQUIRE(stragglers() == 1);
  REQUIRE(store->dropJob("again").isOk());
  monitor.pass();  // sees the job gone
  // Its steps start at 0 again and its finding is new: a state kept by name would wait for
  // step 110 and take the straggler for one already reported.
  stream();
  CHECK(stragglers() == 2);
  auto last = std::find_if(found.rbegin(), found.rend(), [](const MonitorFinding& m) { return m.finding.kind == FindingKind::kComputeStraggler; });
  CHECK(last->steps_after_onset <= 3);
  CHECK(store->findings("again")->size() == 1);
}

TEST_CASE("steps ingest told of are fed from their summaries; the store is read for the steps before the notices began") {
  // Steps 0-39 durable before the monitor heard of any (argusd restarted), then every step
  // told as it is written.
  storage::testutil::TempDir dir;
  auto store = storage::testutil::openStore(dir.path(), 64);
  StragglerJob job(*store, "told");
  std::vector<MonitorFinding> found;
  DiagnosisMonitor monitor(*store, MonitorOptions{}, [&](const MonitorFinding& m) { found.push_back(m); });
  for (uint64_t step = 0; step < 40; ++step) job.writeStep();
  std::optional<uint64_t> found_with;
  for (uint64_t step = 40; step < 140; ++step) {
    job.writeStep(&monitor);
    monitor.pass();
    if (!found.empty() && !found_with) found_with = step;
  }
  REQUIRE(found.size() == 1);
  CHECK(found[0].finding.kind == FindingKind::kComputeStraggler);
  CHECK(found[0].finding.ranks == std::vector<uint32_t>{5});
  CHECK(found_with <= std::optional<uint64_t>(72));
  // The first pass read steps 0-40 back; every later step came from its notices.
  CHECK(metric(monitor, "argus_diagnosis_steps_fed_total{source=\"store\"}") == 41);
  CHECK(metric(monitor, "argus_diagnosis_steps_fed_total{source=\"notices\"}") == 99);
}

TEST_CASE("a rank silent for 64 steps is not waited for: the steps after its last are fed once the others told of them") {
  // Rank 9 stops at step 20 (a dead process, a tracer cut off); the straggler's window opens
  // at step 71. Waiting 64 steps at every step would find it past step 135.
  storage::testutil::TempDir dir;
  auto store = storage::testutil::openStore(dir.path(), 64);
  StragglerJob job(*store, "silent");
  std::vector<MonitorFinding> found;
  MonitorOptions options;
  options.silent_after = std::chrono::milliseconds(0);  // steps come faster here than any job's
  DiagnosisMonitor monitor(*store, options, [&](const MonitorFinding& m) { found.push_back(m); });
  auto fed = [&] { return metric(monitor, "argus_diagnosis_steps_fed_total{source=\"notices\"}") + metric(monitor, "argus_diagnosis_steps_fed_total{source=\"store\"}"); };
  const uint32_t silent = 9;
  uint64_t silent_at = 0;  // the step with which the rank has been silent for 64 steps
  SUBCASE("told of until it stopped") {
    for (uint64_t step = 0; step <= 20; ++step) job.writeStep(&monitor);
    silent_at = 20 + 64;
  }
  SUBCASE("never told of: written before argusd started") {
    for (uint64_t step = 0; step <= 20; ++step) job.writeStep();
    silent_at = 21 + 64;  // the job's first notice told of step 21
  }
  monitor.pass();
  CHECK(fed() == 21);
  std::optional<uint64_t> found_with;
  for (uint64_t step = 21; step < 110; ++step) {
    job.writeStep(&monitor, silent);
    monitor.pass();
    if (step == 83) {  // silent for 63 steps: still waited for
      CHECK(fed() == 21);
      CHECK(metric(monitor, "argus_diagnosis_silent_ranks{job=\"silent\"}") == 0);
    }
    if (!found.empty() && !found_with) found_with = step;
  }
  CHECK(fed() == 110);  // every step, the last one included
  CHECK(metric(monitor, "argus_diagnosis_silent_ranks{job=\"silent\"}") == 1);
  // Back: told of steps again, it is waited for again (the step it missed, fed already, stays so).
  job.writeStep(&monitor);
  monitor.pass();
  CHECK(metric(monitor, "argus_diagnosis_silent_ranks{job=\"silent\"}") == 0);
  CHECK(fed() == 111);
  REQUIRE(found.size() == 1);
  CHECK(found[0].finding.kind == FindingKind::kComputeStraggler);
  CHECK(found[0].finding.ranks == std::vector<uint32_t>{5});
  CHECK(found_with == std::optional<uint64_t>(silent_at));  // steps 21 on fed at once
}

TEST_CASE("a rank quiet for 64 steps but not yet for silent_after is still waited for: steps behind it are fed 64 steps late") {
  storage::testutil::TempDir dir;
  auto store = storage::testutil::openStore(dir.path(), 64);
  StragglerJob job(*store, "lagging");
  DiagnosisMonitor monitor(*store, MonitorOptions{}, nullptr);  // silent_after 30 s: more than this test takes
  for (uint64_t step = 0; step <= 20; ++step) job.writeStep(&monitor);
  for (uint64_t step = 21; step < 110; ++step) {
    job.writeStep(&monitor, 9);
    monitor.pass();
  }
  // Steps 0-45 (109 - 64 = 45): those past 20 read back from the store, as notices did not complete them.
  CHECK(metric(monitor, "argus_diagnosis_steps_fed_total{source=\"notices\"}") + metric(monitor, "argus_diagnosis_steps_fed_total{source=\"store\"}") == 46);
  CHECK(metric(monitor, "argus_diagnosis_silent_ranks{job=\"lagging\"}") == 0);
}

TEST_CASE("a finding's lag counts from when its steps' records were durable, not from the pass that read them") {
  storage::testutil::TempDir dir;
  auto store = storage::testutil::openStore(dir.path(), 64);
  StragglerJob job(*store, "late");
  std::vector<MonitorFinding> found;
  DiagnosisMonitor monitor(*store, MonitorOptions{}, [&](const MonitorFinding& m) { found.push_back(m); });
  for (uint64_t step = 0; step < 80 && found.empty(); ++step) {
    job.writeStep(&monitor);
    // The steps from the onset on wait before a pass reads them (a pass that was busy).
    if (step >= 70) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    monitor.pass();
  }
  REQUIRE(found.size() == 1);
  CHECK(found[0].finding.kind == FindingKind::kComputeStraggler);
  CHECK(found[0].lag_s >= 0.3);
  CHECK(found[0].lag_s < 30);
}

TEST_CASE("a window's ranks are read from the steps notices told, with the findings the store gives") {
  // Two copies of one job: one told as its steps are written, one not (read back).
  storage::testutil::TempDir dir;
  auto store = storage::testutil::openStore(dir.path(), 64);
  StragglerJob told(*store, "told"), read(*store, "read");
  std::map<std::string, std::vector<Finding>> found;
  DiagnosisMonitor monitor(*store, MonitorOptions{}, [&](const MonitorFinding& m) { found[m.job].push_back(m.finding); });
  for (uint64_t step = 0; step < 110; ++step) {
    told.writeStep(&monitor);
    read.writeStep();
    monitor.pass();
  }
  REQUIRE(found["told"].size() == 1);
  REQUIRE(found["read"].size() == 1);
  const Finding& a = found["told"][0];
  const Finding& b = found["read"][0];
  CHECK(a.kind == FindingKind::kComputeStraggler);
  CHECK(a.ranks == std::vector<uint32_t>{5});
  CHECK(a.from_step == b.from_step);
  CHECK(a.ranks == b.ranks);
  CHECK(a.evidence == b.evidence);
  CHECK(a.confidence == b.confidence);
  // Each window read once per job: the told job's from its notices, the other's from the store.
  const double told_reads = metric(monitor, "argus_diagnosis_window_reads_total{source=\"notices\"}");
  CHECK(told_reads > 0);
  CHECK(told_reads == metric(monitor, "argus_diagnosis_window_reads_total{source=\"store\"}"));
}

TEST_CASE("notices of a job created after a pass listed the jobs are kept for the pass that lists it") {
  storage::testutil::TempDir dir;
  auto store = storage::testutil::openStore(dir.path(), 64);
  auto first = store->ensureJob("first");
  REQUIRE(first.isOk());
  simulate::ClusterOptions o;
  o.layout = simulate::ClusterLayout{2, 2, 1, 4};  // 4 ranks
  auto made = simulate::ClusterSimulator::create(o, simulate::builtinKernelMix(8));
  REQUIRE(made.isOk());
  simulate::ClusterSimulator& sim = **made;
  sim.simulate(1);
  std::vector<model::StepRecord> records(sim.layout().ranks());
  std::vector<model::StepSummary> told;
  for (uint32_t rank = 0; rank < records.size(); ++rank) {
    sim.record(rank, 0, &records[rank]);
    told.push_back(model::summarize(records[rank]));
  }
  DiagnosisMonitor monitor(*store, MonitorOptions{}, nullptr);
  // The job's step 0 is told while a pass runs on the list it read before the job existed
  // (ids only grow: the next job's is the next id).
  const storage::JobId next = *first + 1;
  monitor.noteDurable(next, told);
  monitor.pass();
  auto id = store->ensureJob("second");
  REQUIRE(id.isOk());
  REQUIRE(*id == next);
  for (uint32_t rank = 0; rank < records.size(); ++rank) REQUIRE(testing::writeRankRecords(*store, *id, sim, rank, std::span(&records[rank], 1)).isOk());
  monitor.pass();
  CHECK(metric(monitor, "argus_diagnosis_steps_fed_total{source=\"notices\"}") == 1);
  CHECK(metric(monitor, "argus_diagnosis_steps_fed_total{source=\"store\"}") == 0);
}

TEST_CASE("a job told nothing for a while gives its recent steps back; its windows are then read from the store") {
  storage::testutil::TempDir dir;
  auto store = storage::testutil::openStore(dir.path(), 64);
  StragglerJob job(*store, "idle");
  MonitorOptions options;
  options.recent_idle = std::chrono::seconds(1);
  std::vector<MonitorFinding> found;
  DiagnosisMonitor monitor(*store, options, [&](const MonitorFinding& m) { found.push_back(m); });
  auto reads = [&](const std::string& source) { return metric(monitor, "argus_diagnosis_window_reads_total{source=\"" + source + "\"}"); };
  for (uint64_t step = 0; step < 76; ++step) {
    job.writeStep(&monitor);
    monitor.pass();
  }
  REQUIRE(found.size() == 1);  // the straggler, from step 70
  CHECK(reads("notices") > 0);
  CHECK(reads("store") == 0);
  // Idle past recent_idle: the next pass gives the steps back. Steps 76-99 then refill
  // them, but the straggler's open window, analyzed again at step 86 with its baseline
  // from step 20, is read back from the store.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  monitor.pass();
  for (uint64_t step = 76; step < 100; ++step) {
    job.writeStep(&monitor);
    monitor.pass();
  }
  CHECK(reads("store") > 0);
  CHECK(found.size() == 1);  // the same straggler: nothing new
}
