// RecentSteps: what continuous mode's window reads take from the summaries ingest told,
// against the same reads from the store, and when it must decline (a step not every rank
// told, pushed out by a newer one, or dropped on the way).
#include "diagnose/recent_steps.h"

#include <doctest/doctest.h>

#include "../../simulated_job.h"
#include "../storage/store_test_util.h"
#include "diagnose/job_reader.h"

using namespace argus;
using namespace argus::diagnose;

namespace {

const std::vector<uint8_t> kJitKinds = {static_cast<uint8_t>(model::EventKind::kNewKernelSignature), static_cast<uint8_t>(model::EventKind::kRecompile)};

model::StepSummary told(uint32_t rank, uint64_t step, int64_t compute, uint32_t event_kinds = 0) {
  model::StepSummary s;
  s.rank = rank;
  s.step = step;
  s.values[static_cast<size_t>(model::SummaryColumn::kCompute)] = compute;
  s.event_kinds = event_kinds;
  return s;
}

}  // namespace

TEST_CASE("recent steps serve a window's rank phases and its JIT ranks exactly as the store does") {
  storage::testutil::TempDir dir;
  auto store = storage::testutil::openStore(dir.path(), 64);
  simulate::ClusterOptions o;
  o.layout = simulate::ClusterLayout{2, 4, 8, 4};  // 64 ranks
  constexpr uint32_t kRanks = 64, kSteps = 200;
  auto sim = testing::writeSimulatedJob(*store, "j", o, {"compute_straggler:rank=37,at=90,for=20", "jit_stall:rank=12,at=100,for=3"}, kSteps);
  REQUIRE_MESSAGE(sim.isOk(), sim.status().toString());
  // The summaries of the last 128 steps of every rank, as ingest tells them.
  RecentSteps recent(128);
  for (uint32_t rank = 0; rank < kRanks; ++rank) {
    for (uint32_t step = kSteps - 128; step < kSteps; ++step) {
      model::StepRecord rec;
      (*sim)->record(rank, step, &rec);
      recent.add(model::summarize(rec));
    }
  }
  std::vector<bool> detailed(kRanks, false);
  detailed[12] = true;  // its iter and idle too
  JobReader from_store(*store, "j"), from_recent(*store, "j");
  from_recent.serveRecent(&recent, kRanks);

  // Windows whose steps it holds, then one whose baseline began before them.
  const std::vector<StepWindow> held = {{90, 109, 72, 89, false}, {180, 196, 150, 179, false}, {100, 102, 0, 0, true}};
  const std::vector<StepWindow> older = {{90, 109, 40, 89, false}};
  for (const std::vector<StepWindow>* windows : {&held, &older}) {
    auto want = from_store.rankPhases(*windows, kRanks, detailed);
    auto got = from_recent.rankPhases(*windows, kRanks, detailed);
    REQUIRE(want.isOk());
    REQUIRE(got.isOk());
    for (size_t w = 0; w < windows->size(); ++w) {
      for (int side = 0; side < 2; ++side) {
        for (uint32_t r = 0; r < kRanks; ++r) {
          CAPTURE(w);
          CAPTURE(side);
          CAPTURE(r);
          CHECK((*got)[w][side][r] == (*want)[w][side][r]);
        }
      }
    }
  }
  CHECK(recent.served() == 1);
  CHECK(recent.missed() == 1);
  auto phases = from_recent.rankPhases(held, kRanks, detailed);
  REQUIRE(phases.isOk());
  const RankPhasesPair& straggler = (*phases)[0];
  CHECK(straggler[1][37].compute > 1.1 * straggler[0][37].compute);
  CHECK(straggler[1][12].idle > 0);
  CHECK(straggler[1][11].idle == 0);  // not detailed

  // The JIT rank's events: read for it alone, the same as a scan of every rank finds.
  auto want = from_store.events(kJitKinds, 95, 110);
  auto got = from_recent.events(kJitKinds, 95, 110);
  REQUIRE(want.isOk());
  REQUIRE(got.isOk());
  REQUIRE(!want->empty());
  REQUIRE(got->size() == want->size());
  for (size_t i = 0; i < got->size(); ++i) {
    CHECK((*got)[i].rank == 12);
    CHECK((*got)[i].rank == (*want)[i].rank);
    CHECK((*got)[i].step == (*want)[i].step);
    CHECK((*got)[i].value == (*want)[i].value);
  }
  CHECK(recent.ranksWithEvents(kJitKinds, 95, 110, kRanks) == std::optional<std::vector<uint32_t>>(std::vector<uint32_t>{12}));
  CHECK(recent.ranksWithEvents(kJitKinds, 150, 199, kRanks) == std::optional<std::vector<uint32_t>>(std::vector<uint32_t>{}));
  CHECK(from_recent.events(kJitKinds, 150, 199)->empty());
}

TEST_CASE("recent steps hold a step only while every rank has told it and no newer step has pushed it out") {
  RecentSteps recent(8);
  const std::vector<StepWindow> window = {{5, 6, 3, 4, false}};
  for (uint64_t step = 0; step < 8; ++step) {
    for (uint32_t rank = 0; rank < 4; ++rank) recent.add(told(rank, step, static_cast<int64_t>(100 * rank + step)));
  }
  auto phases = recent.rankPhases(window, 4, {}, 4);
  REQUIRE(phases);
  CHECK((*phases)[0][0][2].steps == 2);
  CHECK((*phases)[0][0][2].compute == 203.5);  // steps 3 and 4
  CHECK((*phases)[0][1][2].compute == 205.5);
  CHECK(!recent.rankPhases(window, 4, {}, 5));  // a fifth rank never told them
  CHECK(!recent.rankPhases(window, 4, {}, 0));  // a job without ranks: nothing to count on

  SUBCASE("a step some rank did not tell, or a rank telling it twice") {
    for (uint32_t rank = 0; rank < 3; ++rank) recent.add(told(rank, 8, 1));
    recent.add(told(0, 8, 2));  // again: still three ranks
    CHECK(!recent.ranksWithEvents(kJitKinds, 8, 8, 4));
    CHECK(recent.ranksWithEvents(kJitKinds, 8, 8, 3));
  }
  SUBCASE("more steps than it holds, or a step pushed out by one a rank far ahead told") {
    CHECK(!recent.ranksWithEvents(kJitKinds, 0, 8, 4));
    recent.add(told(0, 13, 1));  // step 13 takes step 5's slot
    CHECK(!recent.rankPhases(window, 4, {}, 4));
    CHECK(recent.ranksWithEvents(kJitKinds, 6, 7, 4));
    recent.add(told(1, 5, 999));  // older than its slot's step now: not kept
    for (uint32_t rank = 1; rank < 4; ++rank) recent.add(told(rank, 13, 7));
    CHECK(recent.rankPhases({{13, 13, 12, 12, false}}, 4, {}, 4) == std::nullopt);  // step 12 never told
    auto late = recent.rankPhases({{13, 13, 0, 0, true}}, 4, {}, 4);
    REQUIRE(late);
    CHECK((*late)[0][1][1].compute == 7);
  }
  SUBCASE("steps whose summaries were dropped on the way") {
    recent.forgetThrough(9);
    for (uint64_t step = 8; step < 11; ++step) {
      for (uint32_t rank = 0; rank < 4; ++rank) recent.add(told(rank, step, 1));
    }
    CHECK(!recent.ranksWithEvents(kJitKinds, 9, 10, 4));
    CHECK(recent.ranksWithEvents(kJitKinds, 10, 10, 4));
  }
  SUBCASE("steps at the end of the range: no loop runs past them") {
    const uint64_t last = UINT64_MAX;
    for (uint64_t step = last - 2; step != 0; ++step) {
      for (uint32_t rank = 0; rank < 4; ++rank) recent.add(told(rank, step, 1, 2));
    }
    CHECK(recent.ranksWithEvents(kJitKinds, last - 2, last, 4) == std::optional<std::vector<uint32_t>>(std::vector<uint32_t>{0, 1, 2, 3}));
    auto phases = recent.rankPhases({{last, last, last - 2, last - 1, false}}, 4, {}, 4);
    REQUIRE(phases);
    CHECK((*phases)[0][0][3].steps == 2);
    CHECK((*phases)[0][1][3].steps == 1);
  }
  SUBCASE("a rank past kMaxRanks is not held; an event kind with no bit is not served") {
    recent.add(told(RecentSteps::kMaxRanks, 7, 1, 0xffffffff));
    CHECK(recent.ranksWithEvents({1}, 7, 7, 4) == std::optional<std::vector<uint32_t>>(std::vector<uint32_t>{}));
    CHECK(!recent.ranksWithEvents({40}, 7, 7, 4));
  }
}
