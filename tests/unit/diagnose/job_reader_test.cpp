// JobReader's per-rank window summaries, read on the worker threads (one part per run of
// ranks), against the same medians computed from one plain scan of the rows.
#include "diagnose/job_reader.h"

#include <doctest/doctest.h>

#include <map>

#include "../../simulated_job.h"
#include "../storage/store_test_util.h"
#include "diagnose/median.h"

using namespace argus;
using namespace argus::diagnose;

TEST_CASE("rankPhases: each rank's medians per window and baseline, whichever part read the rank") {
  storage::testutil::TempDir dir;
  auto store = storage::testutil::openStore(dir.path(), 64);
  simulate::ClusterOptions o;
  o.layout = simulate::ClusterLayout{2, 4, 8, 4};  // 64 ranks: several stripes and parts
  auto sim = testing::writeSimulatedJob(*store, "j", o, {"compute_straggler:rank=37,at=90,for=20"}, 200);
  REQUIRE_MESSAGE(sim.isOk(), sim.status().toString());
  const uint32_t ranks = 64;
  // Two windows in one run of steps (one scan serves both), one with a baseline that
  // overlaps the other's window, and one far apart (a scan of its own) with an odd count.
  const std::vector<StepWindow> windows = {{60, 79, 30, 59, false}, {90, 109, 70, 89, false}, {180, 196, 150, 179, false}};
  JobReader reader(*store, "j");
  auto phases = reader.rankPhases(windows, ranks);
  REQUIRE_MESSAGE(phases.isOk(), phases.status().toString());

  // The same from the rows: per (window, side, rank) the compute values, then their median.
  std::map<std::tuple<size_t, int, uint32_t>, std::vector<int64_t>> compute, transfer;
  storage::ScanSpec spec;
  spec.job = "j";
  spec.table = storage::Table::kSteps;
  spec.columns = {"rank", "step", "compute_ns", "comm_transfer_ns"};
  auto cursor = store->scan(spec);
  REQUIRE(cursor.isOk());
  storage::ColumnBatch b;
  bool has_rows = true;
  size_t rows = 0;
  while (true) {
    REQUIRE((*cursor)->next(&b, &has_rows).isOk());
    if (!has_rows) break;
    for (size_t i = 0; i < b.rows; ++i, ++rows) {
      const auto rank = static_cast<uint32_t>(b.columns[0].ints[i]);
      const auto step = static_cast<uint64_t>(b.columns[1].ints[i]);
      for (size_t w = 0; w < windows.size(); ++w) {
        int side = -1;
        if (step >= windows[w].base_from && step <= windows[w].base_to) side = 0;
        if (step >= windows[w].from_step && step <= windows[w].to_step) side = 1;
        if (side < 0) continue;
        compute[{w, side, rank}].push_back(b.columns[2].ints[i]);
        transfer[{w, side, rank}].push_back(b.columns[3].ints[i]);
      }
    }
  }
  REQUIRE(rows == size_t{ranks} * 200);
  for (size_t w = 0; w < windows.size(); ++w) {
    for (int side = 0; side < 2; ++side) {
      for (uint32_t r = 0; r < ranks; ++r) {
        CAPTURE(w);
        CAPTURE(side);
        CAPTURE(r);
        const RankPhases& p = (*phases)[w][side][r];
        auto& c = compute[{w, side, r}];
        REQUIRE(p.steps == c.size());
        CHECK(p.compute == medianOf(c));
        CHECK(p.transfer == medianOf(transfer[{w, side, r}]));
      }
    }
  }
  // The straggler's window shows it: its compute over the window above its baseline's.
  CHECK((*phases)[1][1][37].compute > 1.1 * (*phases)[1][0][37].compute);
}

TEST_CASE("stepSeries: per step the max over ranks, the earliest start and latest end, summed per part and merged") {
  storage::testutil::TempDir dir;
  auto store = storage::testutil::openStore(dir.path(), 64);
  simulate::ClusterOptions o;
  o.layout = simulate::ClusterLayout{2, 4, 8, 4};  // 64 ranks
  o.checkpoint_every = 40;
  auto sim = testing::writeSimulatedJob(*store, "j", o, {"compute_straggler:rank=50,at=60,for=20"}, 150);
  REQUIRE_MESSAGE(sim.isOk(), sim.status().toString());
  JobReader reader(*store, "j");
  auto series = reader.stepSeries(std::vector<std::string>{"iter_ns", "compute_ns"}, 0, 149, {});
  REQUIRE_MESSAGE(series.isOk(), series.status().toString());
  REQUIRE(series->size() == 2);

  struct Want {
    double iter = 0, compute = 0;
    int64_t start = INT64_MAX, end = INT64_MIN;
    uint32_t ranks = 0;
  };
  std::map<uint64_t, Want> want;
  storage::ScanSpec spec;
  spec.job = "j";
  spec.table = storage::Table::kSteps;
  spec.columns = {"step", "iter_ns", "compute_ns", "start_ns", "end_ns"};
  auto cursor = store->scan(spec);
  REQUIRE(cursor.isOk());
  storage::ColumnBatch b;
  bool has_rows = true;
  while (true) {
    REQUIRE((*cursor)->next(&b, &has_rows).isOk());
    if (!has_rows) break;
    for (size_t i = 0; i < b.rows; ++i) {
      Want& w = want[static_cast<uint64_t>(b.columns[0].ints[i])];
      w.iter = std::max(w.iter, static_cast<double>(b.columns[1].ints[i]));
      w.compute = std::max(w.compute, static_cast<double>(b.columns[2].ints[i]));
      w.start = std::min(w.start, b.columns[3].ints[i]);
      w.end = std::max(w.end, b.columns[4].ints[i]);
      ++w.ranks;
    }
  }
  REQUIRE((*series)[0].size() == want.size());
  size_t expected = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const StepPoint& iter = (*series)[0][i];
    const StepPoint& compute = (*series)[1][i];
    CAPTURE(iter.step);
    const Want& w = want.at(iter.step);
    CHECK(iter.value == w.iter);
    CHECK(compute.step == iter.step);
    CHECK(compute.value == w.compute);
    CHECK(iter.start_ns == w.start);
    CHECK(iter.end_ns == w.end);
    CHECK(iter.ranks == 64);
    CHECK(w.ranks == 64);
    expected += iter.expected;
  }
  CHECK(expected > 0);  // the checkpoints' marker events flag their steps
}
