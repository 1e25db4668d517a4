#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <tuple>

#include "storage/keys.h"

using namespace argus::storage;

TEST_CASE("head keys sort in tuple order") {
  std::mt19937_64 rng(5);
  std::vector<HeadKey> keys;
  const uint32_t jobs[] = {0, 1, 255, 256, 0xffffffffu};
  const uint64_t steps[] = {0, 1, 255, 256, 65535, 65536, 1ull << 32, UINT64_MAX};
  for (int i = 0; i < 2000; ++i) {
    keys.push_back(HeadKey{jobs[rng() % 5], static_cast<uint32_t>(rng() % 3 == 0 ? rng() : rng() % 300), steps[rng() % 8] - rng() % 2,
                           steps[rng() % 8] - rng() % 2, steps[rng() % 8] - rng() % 2});
  }
  auto tup = [](const HeadKey& k) { return std::make_tuple(k.job, k.rank, k.block_base, k.session, k.first_seq); };
  std::vector<HeadKey> by_tuple = keys;
  std::sort(by_tuple.begin(), by_tuple.end(), [&](const auto& a, const auto& b) { return tup(a) < tup(b); });
  std::vector<HeadKey> by_bytes = keys;
  std::sort(by_bytes.begin(), by_bytes.end(), [](const auto& a, const auto& b) { return encodeHeadKey(a) < encodeHeadKey(b); });
  for (size_t i = 0; i < keys.size(); ++i) CHECK(tup(by_tuple[i]) == tup(by_bytes[i]));
  for (const auto& k : keys) {
    HeadKey back;
    std::string e = encodeHeadKey(k);
    CHECK(e.size() == kHeadKeySize);
    char raw[kHeadKeySize];
    encodeHeadKeyTo(k, raw);
    CHECK(std::string(raw, kHeadKeySize) == e);
    REQUIRE(decodeHeadKey(e, &back));
    CHECK(back == k);
  }
}

TEST_CASE("chunk keys sort in tuple order and round-trip") {
  std::mt19937_64 rng(9);
  std::vector<ChunkKey> keys;
  for (int i = 0; i < 2000; ++i) {
    keys.push_back(ChunkKey{static_cast<uint32_t>(rng() % 4), static_cast<Table>(1 + rng() % 5), static_cast<uint8_t>(rng() % 3 == 0 ? 0xF0 : rng() % 12),
                            (rng() % 4) * 256 + (rng() % 2 ? (1ull << 40) : 0), static_cast<uint32_t>(rng() % 1000), static_cast<uint16_t>(rng() % 3)});
  }
  auto tup = [](const ChunkKey& k) { return std::make_tuple(k.job, static_cast<int>(k.table), k.column, k.step_base, k.rank, k.attempt); };
  std::vector<ChunkKey> a = keys, b = keys;
  std::sort(a.begin(), a.end(), [&](const auto& x, const auto& y) { return tup(x) < tup(y); });
  std::sort(b.begin(), b.end(), [](const auto& x, const auto& y) { return encodeChunkKey(x) < encodeChunkKey(y); });
  for (size_t i = 0; i < keys.size(); ++i) CHECK(tup(a[i]) == tup(b[i]));
  for (const auto& k : keys) {
    ChunkKey back;
    std::string e = encodeChunkKey(k);
    CHECK(e.size() == kChunkKeySize);
    REQUIRE(decodeChunkKey(e, &back));
    CHECK(back == k);
    // Every prefix bounds the key.
    for (const std::string& p : {chunkPrefix(k.job), chunkPrefix(k.job, k.table, k.column), chunkPrefix(k.job, k.table, k.column, k.step_base),
                                 chunkPrefix(k.job, k.table, k.column, k.step_base, k.rank)}) {
      CHECK(e.starts_with(p));
      CHECK(e < prefixSuccessor(p));
    }
  }
  ChunkKey bad;
  CHECK_FALSE(decodeChunkKey("short", &bad));
  std::string wrong_table = encodeChunkKey(keys[0]);
  wrong_table[4] = 9;
  CHECK_FALSE(decodeChunkKey(wrong_table, &bad));
}

TEST_CASE("prefix successor") {
  CHECK(prefixSuccessor(std::string("\x01\x02", 2)) == std::string("\x01\x03", 2));
  CHECK(prefixSuccessor(std::string("\x01\xff", 2)) == std::string("\x02", 1));
  CHECK(prefixSuccessor(std::string("\xff\xff", 2)).empty());
}

TEST_CASE("describeKey names the tuple") {
  std::string k = encodeChunkKey(ChunkKey{3, Table::kKernels, 6, 1024, 7, 1});
  CHECK(describeKey(kChunkCf, k) == "chunk job=3 table=kernels column=total_ns step_base=1024 rank=7 attempt=1 (0x" + hexBytes(k) + ")");
  CHECK(describeKey(kHeadCf, encodeHeadKey(HeadKey{1, 2, 256, 4, 5})) == "head job=1 rank=2 block=256 session=4 seq=5");
  CHECK(describeKey(kMetaCf, jobDataKey(2, JobDataKind::kKernelDict, 0xabcdef)) == "meta job=2 kernel signature=0000000000abcdef");
  CHECK(describeKey(kMetaCf, jobByNameKey("llama")) == "meta job name=llama");
  CHECK(describeKey(kHeadCf, "xy") == "head 0x7879");
}
