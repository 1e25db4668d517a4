// HeadIndex alone, and the store keeping it: the ranks a scan reads from head.
#include <doctest/doctest.h>

#include "storage/head_index.h"
#include "store_test_util.h"

using namespace argus;
using namespace argus::storage;
using namespace argus::storage::testutil;

TEST_CASE("head index: ranks with live entries in the blocks a step range overlaps") {
  HeadIndex ix;
  ix.add(1, 7, 0);
  ix.add(1, 3, 256, 2);
  ix.add(1, 5, 512);
  ix.add(2, 9, 0);
  using V = std::vector<uint32_t>;
  CHECK(ix.ranks(1, 0, 1000, 256) == V{3, 5, 7});
  CHECK(ix.ranks(1, 300, 400, 256) == V{3});         // inside block 256
  CHECK(ix.ranks(1, 255, 257, 256) == V{3, 7});      // the edges of blocks 0 and 256
  CHECK(ix.ranks(1, 256, 256, 256).empty());         // an empty range
  CHECK(ix.ranks(1, 768, UINT64_MAX, 256).empty());  // past every block
  CHECK(ix.ranks(3, 0, UINT64_MAX, 256).empty());    // an unknown job
  CHECK(ix.lastBlock(1) == std::optional<uint64_t>(512));  // what lastStep() starts from
  CHECK(ix.lastBlock(2) == std::optional<uint64_t>(0));
  CHECK_FALSE(ix.lastBlock(3).has_value());

  ix.remove(1, 5, 512, 1);
  CHECK(ix.lastBlock(1) == std::optional<uint64_t>(256));
  ix.add(1, 5, 512);
  ix.remove(1, 3, 256, 1);  // one of two entries sealed
  CHECK(ix.ranks(1, 256, 512, 256) == V{3});
  ix.remove(1, 3, 256, 5);  // more than it holds: gone, not negative
  CHECK(ix.ranks(1, 256, 512, 256).empty());
  ix.add(1, 3, 256);
  CHECK(ix.ranks(1, 256, 512, 256) == V{3});
  ix.remove(4, 0, 0, 1);  // unknown: nothing happens
  ix.dropJob(1);
  CHECK(ix.ranks(1, 0, UINT64_MAX, 256).empty());
  CHECK(ix.ranks(2, 0, UINT64_MAX, 256) == V{9});
}

TEST_CASE("the store's head index follows writes and seals, and is rebuilt on reopen") {
  // A scan lists head ranks only through the index: the rows it returns show whether the
  // index held each rank. Rank 1's block 0 is sealed, its block 16 and rank 2's block 0 stay
  // in head.
  TempDir dir;
  auto records = [](uint32_t rank, uint64_t from, uint64_t to) {
    std::vector<model::StepRecord> v;
    for (uint64_t s = from; s < to; ++s) {
      model::StepRecord r;
      r.rank = rank;
      r.step = s;
      r.iter_ns = static_cast<int64_t>(1000 * rank + s);
      v.push_back(r);
    }
    return v;
  };
  auto rows = [](const Store& store) {
    ScanSpec spec;
    spec.job = "j";
    spec.table = Table::kSteps;
    ColumnBatch b;
    REQUIRE(scanAll(store, spec, &b).isOk());
    return b.rows;
  };
  {
    auto store = openStore(dir.path());
    auto job = store->ensureJob("j");
    REQUIRE(job.isOk());
    const auto rank1 = records(1, 0, 18);  // block 0 and steps of the next: sealReady seals block 0
    const auto rank2 = records(2, 0, 5);
    std::vector<WriteRequest> reqs(2);
    reqs[0].job = reqs[1].job = *job;
    reqs[0].records = rank1;  // a span: the vectors outlive the write
    reqs[1].records = rank2;
    REQUIRE(store->writeGroup(reqs).isOk());
    CHECK(rows(*store) == 23);
    REQUIRE(store->sealReady().isOk());
    CHECK(store->lastSealStats().blocks == 1);
    CHECK(rows(*store) == 23);  // rank 1 from a chunk and head, rank 2 from head
    CHECK(store->lastStep("j").value() == std::optional<uint64_t>(17));  // from the index's block 16
  }
  auto store = openStore(dir.path());
  CHECK(rows(*store) == 23);
  CHECK(store->lastStep("j").value() == std::optional<uint64_t>(17));
  REQUIRE(store->sealAll().isOk());
  CHECK(rows(*store) == 23);
  CHECK(store->lastStep("j").value() == std::optional<uint64_t>(17));  // from the chunks alone
}

TEST_CASE("a malformed head key is left out of the index; the store still opens and scans") {
  TempDir dir;
  {
    auto store = openStore(dir.path());
    JobId job = store->ensureJob("j").value();
    model::StepRecord r;
    r.rank = 3;
    r.step = 1;
    r.iter_ns = 5;
    REQUIRE(writeRecords(*store, job, {r}).isOk());
    const DbHandles& h = store->handles();
    REQUIRE(h.db->Put(rocksdb::WriteOptions(), h.head, "short key", "x").ok());
  }
  auto store = openStore(dir.path());  // says so on stderr
  ScanSpec spec;
  spec.job = "j";
  ColumnBatch b;
  REQUIRE(scanAll(*store, spec, &b).isOk());
  CHECK(b.rows == 1);
  CHECK(store->sealAll().isOk());
  REQUIRE(scanAll(*store, spec, &b).isOk());
  CHECK(b.rows == 1);
}
