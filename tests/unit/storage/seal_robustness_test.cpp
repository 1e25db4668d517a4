// Sealing survives bad blocks (C3, I1), never deletes a record re-delivered under it (I2);
// the write path refuses steps the chunks cannot hold; setRetention is not lost to a
// concurrent write (M2); a missing _steps of a non-steps table is Corruption (M4).
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "storage/chunk_reader.h"
#include "storage/chunk_writer.h"
#include "storage/keys.h"
#include "store_test_util.h"

using namespace argus;
using namespace argus::storage;
using namespace argus::storage::testutil;

namespace {

model::StepRecord rec(uint32_t rank, uint64_t step, int64_t start = 1, size_t events = 0) {
  model::StepRecord r;
  r.rank = rank;
  r.step = step;
  r.start_ns = start;
  r.end_ns = start + 10;
  r.iter_ns = 10;
  r.events.resize(events);
  for (size_t i = 0; i < events; ++i) {
    r.events[i].kind = model::EventKind::kMarker;
    r.events[i].ts_ns = static_cast<int64_t>(i);
  }
  return r;
}

std::vector<model::StepRecord> steps(uint32_t rank, uint64_t from, uint64_t to) {
  std::vector<model::StepRecord> out;
  for (uint64_t s = from; s < to; ++s) out.push_back(rec(rank, s, static_cast<int64_t>(s * 100)));
  return out;
}

size_t headRows(RocksStore& s) {
  size_t n = 0;
  REQUIRE(s.forEachRaw("head", [&](std::string_view, std::string_view) { return ++n, true; }).isOk());
  return n;
}

size_t scanRows(const Store& s, const std::string& job, Table t = Table::kSteps) {
  ScanSpec spec;
  spec.job = job;
  spec.table = t;
  ColumnBatch b;
  Status st = scanAll(s, spec, &b);
  REQUIRE_MESSAGE(st.isOk(), st.toString());
  return b.rows;
}

}  // namespace

TEST_CASE("C3: a block that cannot be sealed is skipped; other jobs' blocks still seal, and sealAll reports but continues") {
  TempDir dir;
  auto s = openStore(dir.path(), 16);
  JobId evil = *s->ensureJob("evil");  // sorts first in head: lower job id
  JobId good = *s->ensureJob("good");

  // evil: block 0 has an undecodable head entry; block 16 makes block 0 complete.
  REQUIRE(writeRecords(*s, evil, {rec(0, 1), rec(0, 16)}).isOk());
  std::string bad_key = encodeHeadKey(HeadKey{evil, 0, 0, 0, 0});
  REQUIRE(s->handles().db->Put(rocksdb::WriteOptions(), s->handles().head, bad_key, "\xff\xff not a step record").ok());
  // good: blocks 0 and 16 complete, 32 open.
  REQUIRE(writeRecords(*s, good, steps(0, 0, 40)).isOk());

  Status st = s->sealReady();
  CHECK_FALSE(st.isOk());
  CHECK(st.message().find("job=" + std::to_string(evil)) != std::string::npos);
  SealStats stats = s->lastSealStats();
  CHECK(stats.failed_blocks == 1);
  CHECK(stats.blocks == 2);  // good's blocks 0 and 16
  CHECK(stats.head_rows == 32);
  CHECK(headRows(*s) == 3 + 1);  // evil's 3 entries, good's open block
  CHECK(scanRows(*s, "good") == 40);

  // Again: same result, nothing stuck behind the bad block.
  REQUIRE(writeRecords(*s, good, steps(0, 40, 50)).isOk());
  st = s->sealReady();
  CHECK_FALSE(st.isOk());
  CHECK(s->lastSealStats().failed_blocks == 1);
  CHECK(s->lastSealStats().blocks == 1);  // good's block 32

  // sealAll: reports the bad block, seals everything else (evil's block 16 too).
  st = s->sealAll();
  CHECK_FALSE(st.isOk());
  CHECK(s->lastSealStats().failed_blocks == 1);
  CHECK(s->lastSealStats().blocks == 2);  // evil 16, good 48
  CHECK(headRows(*s) == 2);               // only evil's block 0 (bad row + step 1)
  CHECK(scanRows(*s, "good") == 50);

  // A corrupt sealed chunk of evil's block 16 fails its merge; good still seals.
  ChunkKey at{evil, Table::kSteps, kStepsColumnId, 16, 0, 0};
  REQUIRE(s->handles().db->Put(rocksdb::WriteOptions(), s->handles().chunk, encodeChunkKey(at), "garbage").ok());
  REQUIRE(writeRecords(*s, evil, {rec(0, 17)}).isOk());
  REQUIRE(writeRecords(*s, good, steps(0, 64, 70)).isOk());
  st = s->sealAll();
  CHECK_FALSE(st.isOk());
  CHECK(s->lastSealStats().failed_blocks == 2);
  CHECK(s->lastSealStats().blocks == 1);  // good's block 64
  CHECK(st.message().find("2 blocks not sealed") != std::string::npos);
  CHECK(scanRows(*s, "good") == 56);
}

TEST_CASE("C3: steps past INT64_MAX are refused by write and writeGroup; INT64_MAX itself round-trips") {
  TempDir dir;
  auto s = openStore(dir.path(), 16);
  JobId j = *s->ensureJob("big");
  const uint64_t too_big = uint64_t{1} << 63;
  Status st = writeRecords(*s, j, {rec(0, 1), rec(0, too_big)});
  CHECK(st.code() == Status::Code::kInvalidArgument);
  CHECK(st.message().find(std::to_string(too_big)) != std::string::npos);
  std::vector<model::StepRecord> ok_recs{rec(0, 2)}, bad_recs{rec(1, UINT64_MAX)};
  WriteRequest reqs[2];
  reqs[0].job = j;
  reqs[0].records = ok_recs;
  reqs[1].job = j;
  reqs[1].records = bad_recs;
  st = s->writeGroup(reqs);
  CHECK(st.code() == Status::Code::kInvalidArgument);
  CHECK(st.message().find(std::to_string(UINT64_MAX)) != std::string::npos);
  CHECK(headRows(*s) == 0);  // nothing of a refused request got in

  const uint64_t top = static_cast<uint64_t>(INT64_MAX);
  REQUIRE(writeRecords(*s, j, {rec(0, top - 20), rec(0, top)}).isOk());
  REQUIRE(s->sealAll().isOk());
  CHECK(s->lastSealStats().failed_blocks == 0);
  CHECK(headRows(*s) == 0);
  ScanSpec spec;
  spec.job = "big";
  ColumnBatch b;
  REQUIRE(scanAll(*s, spec, &b).isOk());
  REQUIRE(b.rows == 2);
  CHECK(static_cast<uint64_t>(col(b, "step").ints[1]) == top);
}

TEST_CASE("I1: the writer refuses a block over the per-block row cap") {
  TableBlock b;
  b.reset(Table::kEvents);
  b.steps = {0, 1};
  b.row_counts = {static_cast<int64_t>(kMaxChunkRows), 1};
  b.rows = kMaxChunkRows + 1;
  Status st = ChunkWriter::checkBlock(b);
  CHECK(st.code() == Status::Code::kInvalidArgument);
  CHECK(st.message().find("events") != std::string::npos);
  b.row_counts = {static_cast<int64_t>(kMaxChunkRows) - 1, 1};
  b.rows = kMaxChunkRows;
  CHECK(ChunkWriter::checkBlock(b).isOk());
  CHECK_FALSE(ChunkWriter::checkBlock(b, 10).isOk());
}

TEST_CASE("I1: an oversized block stays in head, scannable, counted as failed; the rest seals") {
  TempDir dir;
  auto s = openStore(dir.path(), 16);
  JobId j = *s->ensureJob("rows");
  SealerTestHooks hooks;
  hooks.max_block_rows = 5;  // stands in for kMaxChunkRows (2^24) so the test stays small
  s->setSealerTestHooks(hooks);
  // block 0: 3 steps x 2 events = 6 event rows > 5; block 16: 2 x 2 = 4; block 32 open.
  REQUIRE(writeRecords(*s, j, {rec(0, 0, 1, 2), rec(0, 1, 1, 2), rec(0, 2, 1, 2), rec(0, 16, 1, 2), rec(0, 17, 1, 2), rec(0, 32, 1, 2)}).isOk());
  Status st = s->sealReady();
  CHECK(st.code() == Status::Code::kInvalidArgument);
  CHECK(st.message().find("step_base=0") != std::string::npos);
  CHECK(s->lastSealStats().failed_blocks == 1);
  CHECK(s->lastSealStats().blocks == 1);
  CHECK(headRows(*s) == 2);  // the entries of block 0 (three records) and block 32
  CHECK(scanRows(*s, "rows", Table::kEvents) == 12);
  CHECK(scanRows(*s, "rows") == 6);
}

TEST_CASE("I2: a record re-delivered while its block is being sealed is not lost") {
  TempDir dir;
  auto s = openStore(dir.path(), 16);
  JobId j = *s->ensureJob("race");
  REQUIRE(writeRecords(*s, j, steps(0, 0, 20)).isOk());
  int calls = 0;
  SealerTestHooks hooks;
  hooks.before_commit = [&](uint32_t, uint32_t, uint64_t base) {
    if (base != 0 || calls++ > 0) return;
    // An acknowledged re-delivery of step 3 with other content, between the sealer's read
    // and its commit (on another thread, as a real writer would be).
    std::thread w([&] { REQUIRE(writeRecords(*s, j, {rec(0, 3, 777777)}).isOk()); });
    w.join();
  };
  s->setSealerTestHooks(hooks);
  REQUIRE(s->sealReady().isOk());
  CHECK(s->lastSealStats().blocks == 1);  // what it read; the re-delivery has a key of its own
  CHECK(headRows(*s) == 2);                // the re-delivery, block 16
  auto startOf3 = [&] {
    ScanSpec spec;
    spec.job = "race";
    spec.from_step = 3;
    spec.to_step = 4;
    ColumnBatch b;
    REQUIRE(scanAll(*s, spec, &b).isOk());
    REQUIRE(b.rows == 1);
    return col(b, "start_ns").ints[0];
  };
  CHECK(startOf3() == 777777);
  REQUIRE(s->sealReady().isOk());  // the next pass merges the newer content into the chunks
  CHECK(s->lastSealStats().blocks == 1);
  CHECK(s->lastSealStats().merged == 1);
  CHECK(headRows(*s) == 1);
  CHECK(startOf3() == 777777);
  s.reset();
  s = openStore(dir.path(), 16);
  CHECK(startOf3() == 777777);
}

TEST_CASE("M2: setRetention is not lost to concurrent writes of the same job") {
  TempDir dir;
  auto s = openStore(dir.path(), 16);
  JobId j = *s->ensureJob("ret");
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    uint64_t step = 0;
    while (!stop.load()) REQUIRE(writeRecords(*s, j, {rec(0, step++)}).isOk());
  });
  int64_t last = 0;
  for (int i = 1; i <= 300; ++i) {
    last = int64_t{1000} * i;
    REQUIRE(s->setRetention("ret", last).isOk());
  }
  stop = true;
  writer.join();
  CHECK(s->findJob("ret")->retention_ns == last);
  s.reset();
  s = openStore(dir.path(), 16);
  CHECK(s->findJob("ret")->retention_ns == last);
}

TEST_CASE("M4: a missing _steps chunk is NotFound for the steps table, Corruption naming the key for others") {
  ChunkGetter none = [](const std::string& key, std::string*, std::string_view*) { return Status::notFound(describeKey(kChunkCf, key)); };
  TableBlock b;
  uint64_t read = 0;
  ChunkKey at{1, Table::kSteps, kStepsColumnId, 0, 0, 0};
  CHECK(ChunkReader::readBlock(at, nullptr, none, &b, &read).isNotFound());
  at.table = Table::kKernels;
  Status st = ChunkReader::readBlock(at, nullptr, none, &b, &read);
  CHECK(st.isCorruption());
  std::string key = describeKey(kChunkCf, encodeChunkKey(at));
  CHECK(st.message().find(key) != std::string::npos);
}
