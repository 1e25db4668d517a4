// HeadIndex alone, and the store keeping it: the ranks a scan reads from head.
#include <doctest/doctest.h>

#include "model/step_chain.h"
#include "simulate/synthetic_steps.h"
#include "storage/head_entry.h"
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

TEST_CASE("head index: chain starts of a block written in order, every kStartSteps steps; none once its order breaks") {
  HeadIndex ix;
  auto entry = [](uint64_t session, uint64_t seq, uint64_t min, uint64_t max, bool keyframe) {
    return HeadIndex::Entry{{1, 4, 256}, session, seq, min, max, keyframe};
  };
  std::vector<HeadIndex::Entry> in;
  for (uint64_t s = 256; s < 300; ++s) in.push_back(entry(5, s, s, s, s % 8 == 0));  // keyframes every 8 steps
  ix.add(in);
  using S = std::optional<HeadIndex::Start>;
  auto seq = [&](uint64_t step) { S at = ix.startFor(1, 4, 256, step); return at ? std::optional<uint64_t>(at->first_seq) : std::nullopt; };
  CHECK(seq(256) == std::optional<uint64_t>(256));
  CHECK(seq(271) == std::optional<uint64_t>(256));  // keyframes 16 steps apart at least: 256, 272, 288
  CHECK(seq(272) == std::optional<uint64_t>(272));
  CHECK(seq(299) == std::optional<uint64_t>(288));
  CHECK(seq(1000) == std::optional<uint64_t>(288));
  CHECK_FALSE(ix.startFor(1, 4, 0, 10).has_value());   // no such block
  CHECK_FALSE(ix.startFor(1, 5, 256, 300).has_value()); // no such rank
  // A later session going on with later steps keeps the order; its chain starts count.
  ix.add(std::vector{entry(6, 1, 310, 311, true)});
  CHECK(seq(320) == std::optional<uint64_t>(1));
  // A restarted attempt re-sending earlier steps: the block is read from its start.
  ix.add(std::vector{entry(7, 1, 290, 290, true)});
  CHECK_FALSE(ix.startFor(1, 4, 256, 320).has_value());
  // Sealed away, the block starts afresh with its next entries.
  ix.remove(1, 4, 256, 46);
  ix.add(std::vector{entry(8, 1, 400, 401, true)});
  CHECK(seq(402) == std::optional<uint64_t>(1));
  // An entry that sorts before the last one breaks the order too.
  ix.add(std::vector{entry(8, 0, 402, 402, true)});
  CHECK_FALSE(ix.startFor(1, 4, 256, 402).has_value());
  // A block listed at open: its order is not known.
  ix.add(2, 4, 0, 3);
  ix.add(std::vector{HeadIndex::Entry{{2, 4, 0}, 9, 1, 20, 20, true}});
  CHECK_FALSE(ix.startFor(2, 4, 0, 30).has_value());
}

TEST_CASE("a scan late in an unsealed block walks its entries from the chain start before it, and every entry once their order breaks") {
  // As a live session stores them: one record per entry, chains of model::kChainSteps.
  TempDir dir;
  auto store = openStore(dir.path(), 256);
  const JobId job = store->ensureJob("j").value();
  simulate::SyntheticSteps gen(3, 8);
  auto write = [&](uint64_t from, uint64_t to, uint16_t attempt, std::vector<model::StepRecord>* kept) {
    model::ChainedStepEncoder encoder({}, 256);
    const uint64_t session = store->newSessionId();
    std::vector<std::string> values;
    std::string encoded;
    for (uint64_t s = from; s < to; ++s) {
      model::StepRecord r = gen.next();
      r.step = s;
      r.attempt = attempt;
      r.iter_ns = static_cast<int64_t>(1000 * attempt + s);
      kept->push_back(r);
      encoded.clear();
      encoder.encode(r, &encoded);
      values.emplace_back();
      beginHeadEntry(&values.back());
      appendHeadRecord(&values.back(), encoded, r);
    }
    std::vector<EncodedEntry> entries;
    for (size_t i = 0; i < values.size(); ++i) entries.push_back({3, 0, session, i + 1, values[i]});
    WriteRequest w;
    w.job = job;
    w.entries = entries;
    REQUIRE(store->write(w).isOk());
  };
  // iter_ns of steps [from, to) as a scan returns them, and the entries it walked.
  auto scan = [&](uint64_t from, uint64_t to, std::vector<int64_t>* iter) {
    ScanSpec spec;
    spec.job = "j";
    spec.columns = {"step", "iter_ns"};
    spec.from_step = from;
    spec.to_step = to;
    ColumnBatch b;
    ScanStats stats;
    REQUIRE(scanAll(*store, spec, &b, &stats).isOk());
    iter->assign(b.columns[1].ints.begin(), b.columns[1].ints.end());
    return stats.head_entries_read;
  };
  std::vector<model::StepRecord> first;
  write(0, 120, 0, &first);
  std::vector<int64_t> iter;
  CHECK(scan(110, 120, &iter) == 120 - 96);  // from the chain that starts at step 96
  CHECK(iter == std::vector<int64_t>{110, 111, 112, 113, 114, 115, 116, 117, 118, 119});
  CHECK(scan(40, 42, &iter) == 120 - 32);  // a start is only where to begin: the walk goes on to the block's end
  CHECK(iter == std::vector<int64_t>{40, 41});
  // A restart from step 100 re-sends steps 100-109 as attempt 1: read from the block's start.
  std::vector<model::StepRecord> again;
  write(100, 110, 1, &again);
  CHECK(scan(105, 112, &iter) == 130);
  CHECK(iter == std::vector<int64_t>{1105, 1106, 1107, 1108, 1109, 110, 111});
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
