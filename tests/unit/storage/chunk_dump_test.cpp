#include <doctest/doctest.h>

#include "storage/chunk_dump.h"
#include "storage/chunk_writer.h"
#include "storage/keys.h"
#include "store_test_util.h"

using namespace argus;
using namespace argus::storage;
using namespace argus::storage::testutil;

TEST_CASE("describeChunk shows header, statistics and values") {
  std::vector<int64_t> v{1000500, 1000200, 1000900, 1000300};
  std::string value = ChunkWriter::encodeIntColumn(ColumnType::kInt64, v, nullptr, 1024, 1027);
  std::string key = encodeChunkKey(ChunkKey{1, Table::kSteps, 5, 1024, 7, 0});
  std::string text = describeChunk(key, value);
  CHECK(text.find("rows=4 steps=1024..1027 min=1000200 max=1000900") != std::string::npos);
  CHECK(text.find("values: 1000500 1000200 1000900 1000300") != std::string::npos);
  value[10] ^= 1;
  CHECK(describeChunk(key, value).find("Corruption") != std::string::npos);
}

TEST_CASE("every stored value of a real store describes without error") {
  TempDir dir;
  auto store = openStore(dir.path());
  JobId job = store->ensureJob("job-a").value();
  simulate::SyntheticSteps gen(1, 8);
  std::vector<model::StepRecord> recs;
  for (int i = 0; i < 40; ++i) recs.push_back(gen.next());
  WriteRequest r;
  r.job = job;
  r.records = recs;
  r.kernels = gen.dictionary().kernels;
  REQUIRE(store->write(r).isOk());
  REQUIRE(store->sealReady().isOk());
  for (const char* cf : {kMetaCf, kHeadCf, kChunkCf}) {
    int n = 0;
    REQUIRE(store->forEachRaw(cf, [&](std::string_view k, std::string_view v) {
      std::string text = describeValue(cf, k, v);
      CHECK(text.find("Corruption") == std::string::npos);
      CHECK_FALSE(describeKey(cf, k).empty());
      if (n++ == 0) MESSAGE(describeKey(cf, k) << " -> " << text);
      return true;
    }).isOk());
    CHECK(n > 0);
  }
}
