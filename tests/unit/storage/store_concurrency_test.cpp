// Writers, sealers and scanners at once: every record written is read back exactly once,
// and no scan ever sees a step twice or a torn block.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "store_test_util.h"

using namespace argus;
using namespace argus::storage;
using namespace argus::storage::testutil;

TEST_CASE("concurrent writes, seals and scans") {
  TempDir dir;
  auto store = openStore(dir.path(), 16);
  JobId job = store->ensureJob("job-a").value();
  const uint32_t kRanks = 4;
  const int kSteps = 120;
  std::vector<std::vector<model::StepRecord>> recs(kRanks);
  for (uint32_t r = 0; r < kRanks; ++r) {
    simulate::SyntheticSteps gen(r, 8);
    for (int s = 0; s < kSteps; ++s) recs[r].push_back(gen.next());
  }
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::atomic<int> scans{0}, seals{0};
  std::vector<std::thread> writers;
  for (uint32_t r = 0; r < kRanks; ++r) {
    writers.emplace_back([&, r] {
      for (int s = 0; s < kSteps; s += 5) {
        // Each slice twice: re-delivery interleaved with seals.
        for (int rep = 0; rep < 2; ++rep) {
          std::vector<model::StepRecord> slice(recs[r].begin() + s, recs[r].begin() + s + 5);
          if (!writeRecords(*store, job, slice).isOk()) ++failures;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(500));  // let seals and scans interleave
      }
    });
  }
  std::thread sealer([&] {
    while (!done || seals < 3) {
      if (!store->sealReady().isOk()) ++failures;
      ++seals;
    }
  });
  std::thread scanner([&] {
    while (!done || scans < 3) {
      ScanSpec s;
      s.job = "job-a";
      s.table = Table::kSteps;
      s.columns = {"rank", "step", "iter_ns"};
      ColumnBatch b;
      if (!scanAll(*store, s, &b).isOk()) {
        ++failures;
        continue;
      }
      ++scans;
      if (b.rows == 0) continue;  // scanned before the first write landed: no batch, no columns
      const auto& rank = col(b, "rank").ints;
      const auto& step = col(b, "step").ints;
      for (size_t i = 1; i < b.rows; ++i) {
        if (std::tie(rank[i - 1], step[i - 1]) >= std::tie(rank[i], step[i])) ++failures;  // order, no duplicates
      }
      for (size_t i = 0; i < b.rows; ++i) {
        if (col(b, "iter_ns").ints[i] != recs[rank[i]][step[i]].iter_ns) ++failures;
      }
    }
  });
  for (auto& t : writers) t.join();
  done = true;
  sealer.join();
  scanner.join();
  CHECK(failures == 0);
  CHECK(scans > 0);
  CHECK(seals > 0);
  MESSAGE(scans.load() << " scans and " << seals.load() << " seals ran alongside the writers");
  REQUIRE(store->sealAll().isOk());
  ColumnBatch b;
  ScanSpec s;
  s.job = "job-a";
  s.table = Table::kKernels;
  s.columns = {"rank", "step", "total_ns"};
  REQUIRE(scanAll(*store, s, &b).isOk());
  size_t want = 0;
  for (const auto& v : recs)
    for (const auto& r : v) want += r.kernels.size();
  CHECK(b.rows == want);
  size_t i = 0;
  for (const auto& v : recs) {
    for (const auto& r : v) {
      for (const auto& k : r.kernels) {
        if (i < b.rows) CHECK(col(b, "total_ns").ints[i] == k.total_ns);
        ++i;
      }
    }
  }
}
