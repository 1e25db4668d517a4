// verifyStore (`argus verify`): a sound store has no problems; each kind of damage, applied
// through the raw DB, is reported naming its key, including those no scan notices (a chunk
// set without its lead chunk, a header at odds with the block's steps).
#include <doctest/doctest.h>

#include <fstream>

#include <rocksdb/db.h>
#include <rocksdb/metadata.h>

#include "storage/chunk_format.h"
#include "storage/keys.h"
#include "storage/store_verifier.h"
#include "store_test_util.h"

using namespace argus;
using namespace argus::storage;
using namespace argus::storage::testutil;

namespace {

constexpr int kRanks = 3, kSealedSteps = 40, kHeadSteps = 4;

// kRanks ranks: kSealedSteps steps sealed into chunks (blocks of 16: 0, 16, 32), then
// kHeadSteps more left in head.
struct Fixture {
  TempDir dir;
  std::unique_ptr<RocksStore> store = openStore(dir.path(), 16);
  JobId job = 0;

  Fixture() {
    job = store->ensureJob("job-a").value();
    std::vector<model::StepRecord> sealed, head;
    for (uint32_t r = 0; r < kRanks; ++r) {
      simulate::SyntheticSteps gen(r, 8);
      for (int s = 0; s < kSealedSteps + kHeadSteps; ++s) (s < kSealedSteps ? sealed : head).push_back(gen.next());
    }
    REQUIRE(writeRecords(*store, job, sealed).isOk());
    REQUIRE(store->sealAll().isOk());
    REQUIRE(writeRecords(*store, job, head).isOk());
  }

  const DbHandles& h() const { return store->handles(); }
  std::string chunkKey(Table t, uint8_t column, uint64_t base = 16, uint32_t rank = 1) const {
    return encodeChunkKey(ChunkKey{job, t, column, base, rank, 0});
  }
  std::string get(const std::string& key) const {
    std::string v;
    REQUIRE(h().db->Get(rocksdb::ReadOptions(), h().chunk, key, &v).ok());
    return v;
  }
  void put(const std::string& key, const std::string& value) { REQUIRE(h().db->Put(rocksdb::WriteOptions(), h().chunk, key, value).ok()); }
  void erase(const std::string& key) { REQUIRE(h().db->Delete(rocksdb::WriteOptions(), h().chunk, key).ok()); }
  // The chunk at `key` re-encoded (a valid checksum) with its header's statistics changed.
  void rewriteStats(const std::string& key, const std::function<void(ChunkStats&)>& change) {
    const std::string value = get(key);
    ChunkView v;
    REQUIRE(parseChunk(value, &v).isOk());
    change(v.stats);
    put(key, encodeChunk(v.type, v.codec, v.stats, v.payload));
  }

  std::vector<std::string> problems(VerifyCounts* counts = nullptr) const {
    std::vector<std::string> out;
    Result<VerifyCounts> c = verifyStore(*store, [&](const std::string& p) { out.push_back(p); });
    REQUIRE_MESSAGE(c.isOk(), c.status().toString());
    CHECK(c->problems == out.size());
    if (counts != nullptr) *counts = *c;
    return out;
  }
};

// Whether some problem mentions every one of `parts`.
bool reported(const std::vector<std::string>& problems, std::initializer_list<std::string> parts) {
  for (const std::string& p : problems) {
    bool all = true;
    for (const std::string& part : parts) all = all && p.find(part) != std::string::npos;
    if (all) return true;
  }
  return false;
}

std::string describe(const std::string& key) { return describeKey(kChunkCf, key); }

}  // namespace

TEST_CASE("a sound store: every entry read, no problems") {
  Fixture f;
  VerifyCounts c;
  CHECK(f.problems(&c).empty());
  CHECK(c.jobs == 1);
  CHECK(c.head_entries > 0);
  CHECK(c.head_records == kRanks * kHeadSteps);
  CHECK(c.chunk_sets == kRanks * 3 * 5);  // 3 blocks, 5 tables
  CHECK(c.chunks > c.chunk_sets);
}

TEST_CASE("a chunk set without its lead chunk, which scans do not list") {
  Fixture f;
  const std::string key = f.chunkKey(Table::kSteps, kFirstStoredColumnId);
  f.erase(key);
  const auto p = f.problems();
  CHECK(p.size() == 1);
  CHECK(reported(p, {describe(key), "missing"}));
}

TEST_CASE("a set whose _steps or _rows chunk is gone") {
  Fixture f;
  const std::string steps = f.chunkKey(Table::kSteps, kStepsColumnId), rows = f.chunkKey(Table::kKernels, kRowCountColumnId, 32, 2);
  f.erase(steps);
  f.erase(rows);
  const auto p = f.problems();
  CHECK(p.size() == 2);
  CHECK(reported(p, {describe(steps), "missing, while other chunks of its set exist"}));
  CHECK(reported(p, {describe(rows)}));
}

TEST_CASE("a flipped byte: the checksum names the chunk, once") {
  Fixture f;
  const std::string key = f.chunkKey(Table::kKernels, 7);
  std::string v = f.get(key);
  v[v.size() / 2] ^= 0x10;
  f.put(key, v);
  const auto p = f.problems();
  CHECK(p.size() == 1);
  CHECK(reported(p, {describe(key), "checksum"}));
}

TEST_CASE("a header whose steps disagree with the block's _steps") {
  Fixture f;
  const std::string key = f.chunkKey(Table::kSteps, kFirstStoredColumnId + 2);
  f.rewriteStats(key, [](ChunkStats& s) { s.last_step -= 1; });
  const auto p = f.problems();
  CHECK(p.size() == 1);
  CHECK(reported(p, {describe(key), "header says steps 16..30", "_steps hold 16 steps 16..31"}));
}

TEST_CASE("a gapless _steps header that its payload contradicts") {
  // Scans take a gapless block's steps from the header alone: moved by one, the header
  // still reads as a block of 16 steps, and every other chunk of the set now disagrees.
  Fixture f;
  const std::string key = f.chunkKey(Table::kSteps, kStepsColumnId);
  f.rewriteStats(key, [](ChunkStats& s) { s.first_step += 1, s.last_step += 1; });
  const auto p = f.problems();
  CHECK(reported(p, {describe(key), "payload's steps differ from its header's"}));
  CHECK(reported(p, {describe(f.chunkKey(Table::kSteps, kFirstStoredColumnId)), "header says steps 16..31"}));
}

TEST_CASE("a garbled head entry, and chunks of a job no meta entry names") {
  Fixture f;
  std::string head_key;
  REQUIRE(f.store->forEachRaw(kHeadCf, [&](std::string_view k, std::string_view) { return head_key = k, false; }).isOk());
  REQUIRE(f.h().db->Put(rocksdb::WriteOptions(), f.h().head, head_key, std::string("\x01\x01\x00\x09garbage..", 13)).ok());
  const std::string stray = encodeChunkKey(ChunkKey{f.job + 7, Table::kSteps, kStepsColumnId, 0, 0, 0});
  f.put(stray, f.get(f.chunkKey(Table::kSteps, kStepsColumnId, 0, 0)));
  const auto p = f.problems();
  CHECK(p.size() == 2);
  CHECK(reported(p, {describeKey(kHeadCf, head_key)}));
  CHECK(reported(p, {"chunk entries of job id " + std::to_string(f.job + 7), "no job"}));
}

TEST_CASE("a damaged SST file: named, its key range skipped, the files after it still checked") {
  Fixture f;
  // job-a's chunks in one SST file, job-b's (a later job id: later keys) in another, which no
  // compaction merges.
  REQUIRE(f.h().db->SetOptions(f.h().chunk, {{"disable_auto_compactions", "true"}}).ok());
  REQUIRE(f.h().db->Flush(rocksdb::FlushOptions(), f.h().chunk).ok());
  const JobId job_b = f.store->ensureJob("job-b").value();
  std::vector<model::StepRecord> records;
  for (uint32_t r = 0; r < kRanks; ++r) {
    simulate::SyntheticSteps gen(r, 8);
    for (int s = 0; s < kSealedSteps; ++s) records.push_back(gen.next());
  }
  REQUIRE(writeRecords(*f.store, job_b, records).isOk());
  REQUIRE(f.store->sealAll().isOk());
  const std::string lost_steps = encodeChunkKey(ChunkKey{job_b, Table::kSteps, kStepsColumnId, 16, 1, 0});
  f.erase(lost_steps);  // damage the checks past the bad file must still find
  REQUIRE(f.h().db->Flush(rocksdb::FlushOptions(), f.h().chunk).ok());
  std::vector<rocksdb::LiveFileMetaData> files;
  f.h().db->GetLiveFilesMetaData(&files);
  std::string job_a_file;
  for (const rocksdb::LiveFileMetaData& m : files) {
    ChunkKey k;
    if (m.column_family_name == kChunkCf && decodeChunkKey(m.largestkey, &k) && k.job == f.job) job_a_file = m.db_path + m.name;
  }
  REQUIRE_FALSE(job_a_file.empty());
  f.store.reset();
  {
    std::fstream file(job_a_file, std::ios::in | std::ios::out | std::ios::binary);
    REQUIRE_MESSAGE(file.is_open(), job_a_file);
    file.seekp(40);  // inside the first data block
    file.put('\x5a').put('\xa5').put('\x5a');
  }
  f.store = RocksStore::openReadOnly(f.dir.path()).value();
  VerifyCounts counts;
  const auto p = f.problems(&counts);
  const std::string name = job_a_file.substr(job_a_file.rfind('/') + 1);
  CHECK(reported(p, {"file " + name + " (chunk, level 0)", "Corruption"}));
  CHECK(reported(p, {"(the end of damaged file " + name + ") not checked", "job=" + std::to_string(f.job)}));
  CHECK(reported(p, {describe(lost_steps), "missing, while other chunks of its set exist"}));
  CHECK(counts.chunk_sets >= 2 * kRanks);  // job-b's: 3 blocks of each rank
}
