// Failure and administration paths: a corrupted chunk is named, never returned; format
// version checks; garbage directories; dropping jobs and retention.
#include <doctest/doctest.h>

#include <fstream>

#include <rocksdb/db.h>

#include "storage/keys.h"
#include "storage/meta_records.h"
#include "store_test_util.h"

using namespace argus;
using namespace argus::storage;
using namespace argus::storage::testutil;

namespace {

std::vector<model::StepRecord> synth(uint32_t rank, int steps) {
  simulate::SyntheticSteps gen(rank, 8);
  std::vector<model::StepRecord> out;
  for (int i = 0; i < steps; ++i) out.push_back(gen.next());
  return out;
}

ScanSpec spec(const std::string& job, Table t) {
  ScanSpec s;
  s.job = job;
  s.table = t;
  return s;
}

}  // namespace

TEST_CASE("a flipped byte in a stored chunk is Corruption naming the key") {
  TempDir dir;
  auto store = openStore(dir.path());
  JobId job = store->ensureJob("job-a").value();
  REQUIRE(writeRecords(*store, job, synth(4, 20)).isOk());
  REQUIRE(store->sealAll().isOk());
  // Flip one payload byte of the kernels total_ns chunk of block 0, through the raw DB.
  std::string key = encodeChunkKey(ChunkKey{job, Table::kKernels, 6, 0, 4, 0});
  const DbHandles& h = store->handles();
  std::string value;
  REQUIRE(h.db->Get(rocksdb::ReadOptions(), h.chunk, key, &value).ok());
  value[value.size() / 2] ^= 0x10;
  REQUIRE(h.db->Put(rocksdb::WriteOptions(), h.chunk, key, value).ok());

  ColumnBatch b;
  ScanSpec s = spec("job-a", Table::kKernels);
  Status st = scanAll(*store, s, &b);
  REQUIRE(st.isCorruption());
  CHECK(st.message().find("table=kernels column=total_ns step_base=0 rank=4 attempt=0") != std::string::npos);
  CHECK(st.message().find(hexBytes(key)) != std::string::npos);
  CHECK(st.message().find("checksum") != std::string::npos);
  MESSAGE(st.toString());
  // Columns whose chunks are intact still read; the broken one never comes back as data.
  s.columns = {"count"};
  CHECK(scanAll(*store, s, &b).isOk());
  s.columns = {"total_ns"};
  CHECK(scanAll(*store, s, &b).isCorruption());
  // A re-seal of that block must refuse to merge the damaged chunk rather than drop it.
  REQUIRE(writeRecords(*store, job, {synth(4, 1)[0]}).isOk());
  CHECK(store->sealAll().isCorruption());
}

TEST_CASE("a garbled or truncated head entry is Corruption naming its key") {
  for (bool truncate : {false, true}) {
    TempDir dir;
    auto store = openStore(dir.path());
    JobId job = store->ensureJob("job-a").value();
    REQUIRE(writeRecords(*store, job, synth(2, 3)).isOk());
    std::string key, value;
    REQUIRE(store->forEachRaw(kHeadCf, [&](std::string_view k, std::string_view v) { return key = k, value = v, false; }).isOk());
    std::string bad = truncate ? value.substr(0, value.size() - 3) : std::string("\x01\x01\x00\x09garbage..", 13);
    const DbHandles& h = store->handles();
    REQUIRE(h.db->Put(rocksdb::WriteOptions(), h.head, key, bad).ok());
    ColumnBatch b;
    Status st = scanAll(*store, spec("job-a", Table::kSteps), &b);
    REQUIRE(st.isCorruption());
    CHECK(st.message().find("head job=1 rank=2 block=0 session=") != std::string::npos);
    CHECK(store->sealAll().isCorruption());
  }
}

TEST_CASE("format version: newer is VersionMismatch, missing on a non-empty store is Corruption") {
  TempDir dir;
  {
    auto store = openStore(dir.path());
    JobId job = store->ensureJob("job-a").value();
    REQUIRE(writeRecords(*store, job, synth(0, 2)).isOk());
    const DbHandles& h = store->handles();
    REQUIRE(h.db->Put(rocksdb::WriteOptions(), h.meta, metaKey(MetaTag::kFormatVersion), encodeU32(kFormatVersion + 1)).ok());
  }
  auto r = Store::open(dir.path());
  REQUIRE_FALSE(r.isOk());
  CHECK(r.status().code() == Status::Code::kVersionMismatch);
  MESSAGE(r.status().toString());
  {
    // Remove the version with a raw RocksDB handle.
    rocksdb::DBOptions o;
    std::vector<rocksdb::ColumnFamilyDescriptor> cfds{{rocksdb::kDefaultColumnFamilyName, {}}, {kMetaCf, {}}, {kHeadCf, {}}, {kChunkCf, {}}};
    std::vector<rocksdb::ColumnFamilyHandle*> hs;
    rocksdb::DB* db = nullptr;
    REQUIRE(rocksdb::DB::Open(o, dir.path(), cfds, &hs, &db).ok());
    REQUIRE(db->Delete(rocksdb::WriteOptions(), hs[1], metaKey(MetaTag::kFormatVersion)).ok());
    for (auto* x : hs) db->DestroyColumnFamilyHandle(x);
    delete db;
  }
  r = Store::open(dir.path());
  REQUIRE_FALSE(r.isOk());
  CHECK(r.status().isCorruption());
  MESSAGE(r.status().toString());
}

TEST_CASE("garbage directories fail cleanly") {
  TempDir dir;
  {
    std::filesystem::create_directories(dir.sub("a"));
    std::ofstream(dir.sub("a/CURRENT")) << "MANIFEST-000042\n";
    std::ofstream(dir.sub("a/MANIFEST-000042")) << "this is not a manifest";
    auto r = Store::open(dir.sub("a"));
    REQUIRE_FALSE(r.isOk());
    MESSAGE(r.status().toString());
  }
  {
    std::ofstream(dir.sub("file")) << "x";
    auto r = Store::open(dir.sub("file"));
    REQUIRE_FALSE(r.isOk());
    CHECK(r.status().code() == Status::Code::kInvalidArgument);
  }
  {
    StoreOptions o;
    o.create_if_missing = false;
    CHECK(Store::open(dir.sub("missing"), o).status().isNotFound());
    o.create_if_missing = true;
    o.block_steps = 100;
    CHECK(Store::open(dir.sub("b"), o).status().code() == Status::Code::kInvalidArgument);
  }
  {
    // A foreign RocksDB (default column family only, with data).
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    REQUIRE(rocksdb::DB::Open(o, dir.sub("foreign"), &db).ok());
    REQUIRE(db->Put(rocksdb::WriteOptions(), "k", "v").ok());
    delete db;
    auto r = Store::open(dir.sub("foreign"));
    REQUIRE_FALSE(r.isOk());
    CHECK(r.status().isCorruption());
  }
}

TEST_CASE("read-only open sees the data and refuses writes") {
  TempDir dir;
  {
    auto store = openStore(dir.path());
    JobId job = store->ensureJob("job-a").value();
    REQUIRE(writeRecords(*store, job, synth(0, 20)).isOk());
    REQUIRE(store->sealReady().isOk());
  }
  StoreOptions o;
  o.read_only = true;
  auto r = Store::open(dir.path(), o);
  REQUIRE_MESSAGE(r.isOk(), r.status().toString());
  ColumnBatch b;
  REQUIRE(scanAll(**r, spec("job-a", Table::kSteps), &b).isOk());
  CHECK(b.rows == 20);
  CHECK((*r)->sealAll().code() == Status::Code::kPermissionDenied);
  CHECK((*r)->ensureJob("job-b").status().code() == Status::Code::kPermissionDenied);
}

TEST_CASE("dropJob deletes every range of the job and nothing else; retention drops old jobs") {
  TempDir dir;
  auto store = openStore(dir.path());
  JobId a = store->ensureJob("job-a").value();
  JobId b = store->ensureJob("job-b").value();
  model::RankTopology topo;
  WriteRequest r;
  r.job = a;
  r.topology = &topo;
  auto recs = synth(0, 40);
  r.records = recs;
  REQUIRE(store->write(r).isOk());
  r.job = b;
  REQUIRE(store->write(r).isOk());
  REQUIRE(store->sealReady().isOk());

  REQUIRE(store->dropJob("job-a").isOk());
  CHECK(store->findJob("job-a").status().isNotFound());
  CHECK(store->dropJob("job-a").isNotFound());
  ColumnBatch batch;
  REQUIRE(scanAll(*store, spec("job-b", Table::kSteps), &batch).isOk());
  CHECK(batch.rows == 40);
  size_t a_keys = 0;
  for (const char* cf : {kHeadCf, kChunkCf}) {
    REQUIRE(store->forEachRaw(cf, [&](std::string_view k, std::string_view) {
      if (k.substr(0, 4) == headPrefix(a)) ++a_keys;
      return true;
    }).isOk());
  }
  REQUIRE(store->forEachRaw(kMetaCf, [&](std::string_view k, std::string_view) {
    if (k.starts_with(jobDataPrefix(a))) ++a_keys;
    return true;
  }).isOk());
  CHECK(a_keys == 0);
  // The name can come back; it gets a fresh id and no old data.
  JobId a2 = store->ensureJob("job-a").value();
  CHECK(a2 != a);
  REQUIRE(scanAll(*store, spec("job-a", Table::kSteps), &batch).isOk());
  CHECK(batch.rows == 0);

  // Retention: job-b kept forever until it has a retention; then dropped when stale.
  int64_t last = store->findJob("job-b")->last_write_ns;
  REQUIRE(store->applyRetention(last + 1'000'000'000'000).isOk());
  CHECK(store->findJob("job-b").isOk());
  REQUIRE(store->setRetention("job-b", 3'600'000'000'000).isOk());
  REQUIRE(store->applyRetention(last + 1'000'000'000).isOk());
  CHECK(store->findJob("job-b").isOk());
  REQUIRE(store->applyRetention(last + 3'600'000'000'001 + 1).isOk());
  CHECK(store->findJob("job-b").status().isNotFound());
  CHECK(store->findJob("job-a").isOk());
  store.reset();
  // Survives reopen.
  auto again = openStore(dir.path());
  CHECK(again->findJob("job-b").status().isNotFound());
  CHECK(again->findJob("job-a")->id == a2);
  CHECK(again->ensureJob("job-c").value() > a2);
}

TEST_CASE("a column added later reads its absent value in blocks sealed before it, and its value once resealed") {
  TempDir dir;
  auto store = openStore(dir.path());
  JobId job = store->ensureJob("job-a").value();
  std::vector<model::StepRecord> recs = synth(3, 40);  // blocks 0 and 16 full, 32 partial
  REQUIRE(writeRecords(*store, job, recs).isOk());
  REQUIRE(store->sealAll().isOk());
  const ColumnDef* late = findColumn(Table::kSteps, "comm_transfer_ns");
  REQUIRE(late != nullptr);
  REQUIRE(late->added_later);
  // Blocks as a build before the column sealed them: no chunk of it.
  const DbHandles& h = store->handles();
  size_t removed = 0;
  for (uint64_t base : {0, 16, 32}) {
    std::string key = encodeChunkKey(ChunkKey{job, Table::kSteps, late->id, base, 3, 0});
    std::string v;
    REQUIRE(h.db->Get(rocksdb::ReadOptions(), h.chunk, key, &v).ok());
    REQUIRE(h.db->Delete(rocksdb::WriteOptions(), h.chunk, key).ok());
    ++removed;
  }
  REQUIRE(removed == 3);

  auto check = [&](const std::vector<std::string>& columns, bool all_absent) {
    ScanSpec s = spec("job-a", Table::kSteps);
    s.columns = columns;
    ColumnBatch b;
    REQUIRE(scanAll(*store, s, &b).isOk());
    REQUIRE(b.rows == recs.size());  // every block listed, though it lacks the column
    const Column& c = col(b, "comm_transfer_ns");
    for (size_t i = 0; i < recs.size(); ++i) {
      CHECK(c.ints[i] == (all_absent ? late->absent : model::commTransferNs(recs[i].collectives)));
    }
  };
  check({"comm_transfer_ns"}, true);
  check({"step", "comm_transfer_ns"}, true);
  check({"compute_ns", "comm_transfer_ns"}, true);
  check({}, true);

  // A reseal of the partial block (a late step arrives) rebuilds it from its records: the
  // column is derived again, for the old steps too.
  simulate::SyntheticSteps gen(3, 8);
  model::StepRecord more;
  for (int i = 0; i <= 40; ++i) more = gen.next();
  REQUIRE(writeRecords(*store, job, {more}).isOk());
  REQUIRE(store->sealAll().isOk());
  recs.push_back(more);
  ScanSpec s = spec("job-a", Table::kSteps);
  s.columns = {"step", "comm_transfer_ns"};
  s.from_step = 32;
  ColumnBatch b;
  REQUIRE(scanAll(*store, s, &b).isOk());
  REQUIRE(b.rows == 9);
  for (size_t i = 0; i < b.rows; ++i) CHECK(col(b, "comm_transfer_ns").ints[i] == model::commTransferNs(recs[32 + i].collectives));
  CHECK(model::commTransferNs(recs[32].collectives) > 0);
}
