// The whole diagnosis on simulated jobs with one fault each: the right kind, the right
// place (rank, stage, link, kernel) and window, and nothing on a healthy job.
#include "diagnose/diagnosis.h"

#include <doctest/doctest.h>

#include <rocksdb/db.h>

#include "../../simulated_job.h"
#include "../storage/store_test_util.h"
#include "storage/keys.h"

using namespace argus;
using namespace argus::diagnose;

namespace {

simulate::ClusterOptions smallJob() {
  simulate::ClusterOptions o;
  o.layout = simulate::ClusterLayout{2, 4, 4, 4};  // 32 ranks on 8 hosts
  o.microbatches = 8;
  o.checkpoint_every = 50;
  return o;
}

struct Diagnosed {
  std::vector<Finding> findings;
  std::vector<simulate::Fault> truth;
};

// Blocks as a build before comm_transfer_ns sealed them (those starting before `below`):
// sealed, without its chunks.
void dropTransferColumn(storage::RocksStore& store, uint64_t below = UINT64_MAX) {
  REQUIRE(store.sealAll().isOk());
  const storage::DbHandles& h = store.handles();
  const uint8_t id = storage::findColumn(storage::Table::kSteps, "comm_transfer_ns")->id;
  std::unique_ptr<rocksdb::Iterator> it(h.db->NewIterator(rocksdb::ReadOptions(), h.chunk));
  size_t dropped = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    storage::ChunkKey k;
    if (storage::decodeChunkKey(std::string_view(it->key().data(), it->key().size()), &k) && k.table == storage::Table::kSteps && k.column == id &&
        k.step_base < below) {
      REQUIRE(h.db->Delete(rocksdb::WriteOptions(), h.chunk, it->key()).ok());
      ++dropped;
    }
  }
  REQUIRE(dropped > 0);
}

// old_blocks: the blocks starting before this step lack comm_transfer_ns.
Diagnosed run(const std::vector<std::string>& faults, uint32_t steps = 140, uint64_t old_blocks = 0) {
  storage::testutil::TempDir dir;
  auto store = storage::testutil::openStore(dir.path(), 64);
  auto sim = testing::writeSimulatedJob(*store, "j", smallJob(), faults, steps);
  REQUIRE_MESSAGE(sim.isOk(), sim.status().toString());
  if (old_blocks > 0) dropTransferColumn(*store, old_blocks);
  JobReader reader(*store, "j");
  Result<std::vector<Finding>> found = diagnose::diagnose(reader, 0, steps - 1);
  REQUIRE_MESSAGE(found.isOk(), found.status().toString());
  for (const Finding& f : *found) MESSAGE(std::string(findingKindName(f.kind)) << " " << f.from_step << "-" << f.to_step << " " << f.evidence);
  return {*found, (*sim)->faults()};
}

}  // namespace

TEST_CASE("a healthy job (warm-up, checkpoints, noise) has no findings") { CHECK(run({}, 300).findings.empty()); }

TEST_CASE("each fault kind is found, placed and timed") {
  struct Case {
    std::string spec;
    FindingKind kind;
  } cases[] = {
      {"compute_straggler:rank=13,at=70,for=30", FindingKind::kComputeStraggler},
      {"masked_straggler:rank=13,at=70,for=30", FindingKind::kMaskedStraggler},
      {"link_degradation:hosts=2-3,at=70,for=30", FindingKind::kLinkDegradation},
      {"pipeline_bubble:stage=2,at=70,for=30", FindingKind::kPipelineBubble},
      {"jit_stall:rank=9,at=70,for=3", FindingKind::kJitStall},
  };
  for (const Case& c : cases) {
    CAPTURE(c.spec);
    Diagnosed d = run({c.spec});
    REQUIRE(!d.findings.empty());
    const Finding& f = d.findings.front();
    CHECK(f.kind == c.kind);
    CHECK(f.from_step >= 70);
    CHECK(f.from_step <= 72);  // within min_steps of the onset
    const simulate::Fault& truth = d.truth.front();
    CHECK(f.to_step == truth.from_step + truth.steps - 1);
    if (truth.rank) CHECK(f.ranks == std::vector<uint32_t>{*truth.rank});
    if (truth.stage) CHECK(f.pp_rank == truth.stage);
    if (truth.hosts) CHECK(f.link == "node-00002/node-00003");
    CHECK(f.confidence > 0.5);
    // One cause, one finding (a straggler may add its kernel).
    for (size_t i = 1; i < d.findings.size(); ++i) CHECK(d.findings[i].kind == FindingKind::kDegradedKernel);
  }
}

TEST_CASE("blocks sealed before comm_transfer_ns: every rank's collectives are read, the link is still found") {
  Diagnosed d = run({"link_degradation:hosts=2-3,at=70,for=30"}, 140, UINT64_MAX);
  REQUIRE(!d.findings.empty());
  CHECK(d.findings.front().kind == FindingKind::kLinkDegradation);
  CHECK(d.findings.front().link == "node-00002/node-00003");
  // A job whose store was upgraded mid-run: its transfer time is unknown (-1) and then known,
  // which is no anomaly.
  CHECK(run({}, 300, 128).findings.empty());
}

TEST_CASE("a straggler whose slowdown sits in one kernel gets a degraded-kernel finding naming it") {
  const std::string kernel = simulate::builtinKernelMix(16).kernels.front().entry.name;
  Diagnosed d = run({"compute_straggler:rank=5,at=70,for=30,severity=1,kernel=" + kernel.substr(0, kernel.find('('))});
  REQUIRE(d.findings.size() == 2);
  CHECK(d.findings[0].kind == FindingKind::kComputeStraggler);
  CHECK(d.findings[1].kind == FindingKind::kDegradedKernel);
  CHECK(d.findings[1].kernel == kernel);
  CHECK(d.findings[1].ranks == std::vector<uint32_t>{5});
}

TEST_CASE("faults at different times are found in their own windows") {
  Diagnosed d = run({"compute_straggler:rank=3,at=40,for=20", "link_degradation:hosts=4-5,at=90,for=20"});
  std::vector<FindingKind> kinds;
  for (const Finding& f : d.findings) {
    if (f.kind != FindingKind::kDegradedKernel) kinds.push_back(f.kind);
  }
  CHECK(kinds == std::vector<FindingKind>{FindingKind::kComputeStraggler, FindingKind::kLinkDegradation});
}

TEST_CASE("a link that slows 4 steps after a straggler recovers: two windows, each fault found and placed") {
  // The straggler shows in the step and compute series, the link only in the transfer
  // series: joined across the 3-step gap, neither stood out over the 63 steps.
  Diagnosed d = run({"compute_straggler:rank=3,at=55,for=30", "link_degradation:hosts=4-5,at=88,for=30"}, 120);
  std::vector<std::pair<FindingKind, uint64_t>> found;
  for (const Finding& f : d.findings) {
    if (f.kind != FindingKind::kDegradedKernel) found.emplace_back(f.kind, f.from_step);
  }
  CHECK(found == std::vector<std::pair<FindingKind, uint64_t>>{{FindingKind::kComputeStraggler, 55}, {FindingKind::kLinkDegradation, 88}});
}

TEST_CASE("windows of the series join where they overlap or touch, not across steps back to normal") {
  auto window = [](uint64_t from, uint64_t to) {
    AnomalyWindow w;
    w.from_step = from;
    w.to_step = to;
    return w;
  };
  auto spans = [](const std::vector<AnomalyWindow>& ws) {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (const AnomalyWindow& w : ws) out.emplace_back(w.from_step, w.to_step);
    return out;
  };
  using Spans = std::vector<std::pair<uint64_t, uint64_t>>;
  CHECK(spans(mergeWindows({window(34, 40), window(10, 20), window(12, 25), window(26, 28)})) == Spans{{10, 28}, {34, 40}});
  CHECK(spans(mergeWindows({window(10, 20), window(22, 30)})) == Spans{{10, 20}, {22, 30}});
  CHECK(mergeWindows({}).empty());
}

TEST_CASE("an unknown job is NotFound; a bad metric InvalidArgument") {
  storage::testutil::TempDir dir;
  auto store = storage::testutil::openStore(dir.path());
  JobReader reader(*store, "nope");
  CHECK(diagnose::diagnose(reader, 0, 10).status().code() == Status::Code::kNotFound);
  REQUIRE(testing::writeSimulatedJob(*store, "j", smallJob(), {}, 20).isOk());
  JobReader j(*store, "j");
  CHECK(findAnomalyWindows(j, 0, 19, "nope_ns", std::nullopt, {}).status().code() == Status::Code::kInvalidArgument);
}

TEST_CASE("steps far from the range's start, and absurd rank numbers, get answers and errors, not gigabytes") {
  storage::testutil::TempDir dir;
  auto store = storage::testutil::openStore(dir.path());
  auto id = store->ensureJob("late");
  REQUIRE(id.isOk());
  simulate::SyntheticOptions o;
  o.first_step = 100'000'000;  // a job resumed at step 10^8
  o.signatures = 2;
  for (uint32_t rank : {0u, 1u}) {
    simulate::SyntheticSteps gen(rank, o);
    std::vector<model::StepRecord> records;
    for (int i = 0; i < 100; ++i) records.push_back(gen.next());
    storage::WriteRequest w;
    w.job = *id;
    w.records = records;
    REQUIRE(store->write(w).isOk());
  }
  REQUIRE(store->sealAll().isOk());
  JobReader reader(*store, "late");
  std::vector<StepPoint> series;
  Result<std::vector<AnomalyWindow>> windows = findAnomalyWindows(reader, 0, 100'000'099, "iter_ns", std::nullopt, {}, &series);
  REQUIRE_MESSAGE(windows.isOk(), windows.status().toString());
  REQUIRE(series.size() == 100);
  CHECK(series.front().step == 100'000'000);
  CHECK(series.front().ranks == 2);
  CHECK(diagnose::diagnose(reader, 0, 100'000'099).isOk());

  model::RankTopology far;
  far.rank = 3'000'000'000u;
  storage::WriteRequest w;
  w.job = *id;
  w.topology = &far;
  REQUIRE(store->write(w).isOk());
  auto topology = reader.topology();
  REQUIRE(topology.isOk());
  StepWindow window;
  window.base_from = 100'000'000;
  window.base_to = 100'000'049;
  window.from_step = 100'000'050;
  window.to_step = 100'000'099;
  Result<std::vector<Finding>> found = analyzeWindow(reader, *topology, window);
  CHECK(found.status().code() == Status::Code::kInvalidArgument);
  CHECK(found.status().message().find("rank 3000000000") != std::string::npos);
}

TEST_CASE("a finding's wall clock: its steps' earliest start and latest end on the first data-parallel replica, on every rank where that lacks them") {
  // Ranks of dp_rank 0 (0, 1, 8, 9, 16, 17, 24, 25 of tp 2 x pp 4 x dp 4) stop reporting at
  // step `replica_until`; the others report all 140 steps. A straggler from step 70.
  for (const uint64_t replica_until : {uint64_t{140}, uint64_t{85}}) {
    CAPTURE(replica_until);
    storage::testutil::TempDir dir;
    auto store = storage::testutil::openStore(dir.path(), 64);
    simulate::ClusterOptions o = smallJob();
    o.faults = {*simulate::parseFault("compute_straggler:rank=13,at=70,for=30")};
    auto made = simulate::ClusterSimulator::create(o, simulate::builtinKernelMix(16));
    REQUIRE(made.isOk());
    simulate::ClusterSimulator& sim = **made;
    auto id = store->ensureJob("j");
    REQUIRE(id.isOk());
    constexpr uint32_t kSteps = 140;
    sim.simulate(kSteps);
    std::map<std::pair<uint32_t, uint64_t>, std::pair<int64_t, int64_t>> times;  // (rank, step): start, end
    for (uint32_t rank = 0; rank < sim.layout().ranks(); ++rank) {
      const bool replica = sim.layout().topology(rank).dp_rank == 0;
      std::vector<model::StepRecord> records(replica ? replica_until : kSteps);
      for (uint32_t i = 0; i < records.size(); ++i) {
        sim.record(rank, i, &records[i]);
        times[{rank, records[i].step}] = {records[i].start_ns, records[i].end_ns};
      }
      REQUIRE(testing::writeRankRecords(*store, *id, sim, rank, records).isOk());
    }
    JobReader reader(*store, "j");
    Result<std::vector<Finding>> found = diagnose::diagnose(reader, 0, kSteps - 1);
    REQUIRE_MESSAGE(found.isOk(), found.status().toString());
    REQUIRE(!found->empty());
    // Over the replica's ranks where any has the step, else over every rank.
    auto expect = [&](uint64_t step, bool start) {
      std::optional<int64_t> on_replica, on_all;
      for (const auto& [key, t] : times) {
        if (key.second != step) continue;
        const int64_t v = start ? t.first : t.second;
        auto better = [&](std::optional<int64_t>& m) { m = !m ? v : start ? std::min(*m, v) : std::max(*m, v); };
        better(on_all);
        if (sim.layout().topology(key.first).dp_rank == 0) better(on_replica);
      }
      return on_replica ? *on_replica : on_all.value_or(0);
    };
    bool past_replica = false;
    for (const Finding& f : *found) {
      CAPTURE(f.from_step);
      CAPTURE(f.to_step);
      CHECK(f.from_ns == expect(f.from_step, true));
      CHECK(f.to_ns == expect(f.to_step, false));
      past_replica = past_replica || f.to_step >= replica_until;
    }
    CHECK(past_replica == (replica_until < kSteps));  // the second case reads every rank
  }
}
