#include <doctest/doctest.h>

#include <random>

#include "storage/chunk_format.h"
#include "storage/chunk_reader.h"
#include "storage/chunk_writer.h"
#include "storage/column_codec.h"
#include "storage/hist_codec.h"
#include "tests/unit/hex_bytes.h"

using namespace argus;
using namespace argus::storage;
using argus::testing::unhex;

TEST_CASE("chunk header round-trips with statistics") {
  std::vector<int64_t> v{5, -3, 9, INT64_MIN, 2};
  std::string value = ChunkWriter::encodeIntColumn(ColumnType::kInt64, v, nullptr, 100, 104);
  ChunkView view;
  REQUIRE(parseChunk(value, &view).isOk());
  CHECK(view.version == kChunkVersion);
  CHECK(view.type == StoredType::kInt64);
  CHECK(view.stats.rows == 5);
  CHECK(view.stats.first_step == 100);
  CHECK(view.stats.last_step == 104);
  CHECK(view.stats.has_min_max);
  CHECK(view.stats.min == INT64_MIN);
  CHECK(view.stats.max == 9);
  CHECK(view.stats.nan_count == 0);
  Column c;
  REQUIRE(ChunkReader::decodeColumn("k", value, ColumnType::kInt64, 5, nullptr, &c).isOk());
  CHECK(c.ints == v);

  std::vector<int64_t> u{static_cast<int64_t>(UINT64_MAX), 1};
  value = ChunkWriter::encodeIntColumn(ColumnType::kUInt64, u, nullptr, 0, 0);
  REQUIRE(parseChunk(value, &view).isOk());
  CHECK(static_cast<uint64_t>(view.stats.min) == 1);
  CHECK(static_cast<uint64_t>(view.stats.max) == UINT64_MAX);

  // A sum past 9e18 is stored as an f64.
  std::vector<int64_t> big{INT64_MAX, INT64_MAX, 3};
  value = ChunkWriter::encodeIntColumn(ColumnType::kInt64, big, nullptr, 7, 9);
  REQUIRE(parseChunk(value, &view).isOk());
  CHECK(view.stats.sum == static_cast<double>(INT64_MAX) * 2 + 3);
  CHECK(view.stats.rows == 3);
  CHECK(view.stats.last_step == 9);
}

TEST_CASE("a header whose payload length leaves bytes before the checksum is named") {
  std::vector<int64_t> v{1, 2, 3};
  std::string value = ChunkWriter::encodeIntColumn(ColumnType::kInt64, v, nullptr, 0, 2);
  std::string body = value.substr(0, value.size() - 8) + "x";  // one byte after the payload
  const uint64_t h = chunkChecksum(body);
  for (int b = 0; b < 8; ++b) body.push_back(static_cast<char>(h >> (8 * b)));
  ChunkView view;
  Status s = parseChunk(body, &view);
  CHECK(s.isCorruption());
  CHECK(s.message() == "chunk: 1 bytes between payload and checksum");
}

TEST_CASE("every flipped byte and every truncation is Corruption") {
  std::vector<int64_t> v;
  for (int i = 0; i < 300; ++i) v.push_back(i * i);
  std::string value = ChunkWriter::encodeIntColumn(ColumnType::kInt64, v, nullptr, 0, 299);
  for (size_t i = 0; i < value.size(); ++i) {
    for (uint8_t bit : {0x01, 0x80}) {
      std::string bad = value;
      bad[i] = static_cast<char>(bad[i] ^ bit);
      ChunkView view;
      Status s = parseChunk(bad, &view);
      CHECK(s.isCorruption());
    }
  }
  for (size_t n = 0; n < value.size(); ++n) {
    ChunkView view;
    CHECK(parseChunk(std::string_view(value).substr(0, n), &view).isCorruption());
  }
  Column c;
  std::string bad = value;
  bad[7] ^= 1;
  Status s = ChunkReader::decodeColumn("KEYNAME", bad, ColumnType::kInt64, SIZE_MAX, nullptr, &c);
  CHECK(s.isCorruption());
  CHECK(s.message().find("checksum") != std::string::npos);
}

TEST_CASE("random chunk values are Corruption") {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 5000; ++i) {
    std::string v(rng() % 80, '\0');
    for (auto& c : v) c = static_cast<char>(rng());
    ChunkView view;
    CHECK(parseChunk(v, &view).isCorruption());
  }
}

TEST_CASE("a valid checksum over a hostile body is still caught by the decoders") {
  // Build chunks whose header and payload are random but whose checksum is right.
  std::mt19937_64 rng(2);
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string body;
    body.push_back(static_cast<char>(kChunkVersion));
    body.push_back(static_cast<char>(rng() % 8));
    body.push_back(static_cast<char>(rng() % 2));
    for (int n = rng() % 24; n > 0; --n) body.push_back(static_cast<char>(rng() % 3 == 0 ? rng() : rng() % 8));
    uint64_t h = chunkChecksum(body);
    for (int b = 0; b < 8; ++b) body.push_back(static_cast<char>(h >> (8 * b)));
    Column c;
    Status s = ChunkReader::decodeColumn("k", body, (body[2] == 0) ? ColumnType::kInt64 : ColumnType::kUInt64, SIZE_MAX, nullptr, &c);
    if (s.isOk()) {
      ++parsed;
    } else {
      CHECK(s.isCorruption());
    }
  }
  MESSAGE(parsed << " random chunks decoded cleanly");
}

// The worked example of docs/format/chunk.md, byte for byte: the writer must keep producing
// it and readers must keep reading it (stored data outlives the code that wrote it).
TEST_CASE("the documented chunks: written byte for byte, read back to their values") {
  const std::string steps = unhex("01 07 01 04 80 08 03 03 80 08 83 08 8c 40 00 03 80 10 02 0a a8 59 cd 71 0c 8a f6");
  const std::string iter = unhex(
      "01 03 00 04 80 08 03 03 90 8c 7a 88 97 7a d8 c1 e8 03 00 09 e8 90 7a d7 04 f8 0a af 09 06 1a c5 f1 c8 1a 33 ed");
  const std::vector<int64_t> step_values{1024, 1025, 1026, 1027};
  const std::vector<int64_t> iter_values{1000500, 1000200, 1000900, 1000300};
  CHECK(ChunkWriter::encodeIntColumn(ColumnType::kUInt64, step_values, nullptr, 1024, 1027) == steps);
  CHECK(ChunkWriter::encodeIntColumn(ColumnType::kInt64, iter_values, nullptr, 1024, 1027) == iter);

  Column c;
  REQUIRE(ChunkReader::decodeColumn("k", steps, ColumnType::kUInt64, 4, nullptr, &c).isOk());
  CHECK(c.ints == step_values);
  REQUIRE(ChunkReader::decodeColumn("k", iter, ColumnType::kInt64, 4, nullptr, &c).isOk());
  CHECK(c.ints == iter_values);
  ChunkView view;
  REQUIRE(parseChunk(iter, &view).isOk());
  CHECK(view.stats.min == 1000200);
  CHECK(view.stats.max == 1000900);
  CHECK(view.stats.sum == 4001900);
}

TEST_CASE("contextOf names the columns each codec predicts from") {
  auto of = [](CodecId codec, std::string_view payload, bool zstd = false) {
    ChunkView v;
    v.codec = static_cast<uint8_t>(static_cast<uint8_t>(codec) | (zstd ? kCodecZstdFlag : 0));
    v.payload = payload;
    return contextOf(v);
  };
  CHECK(!of(CodecId::kDelta, "").any());
  CHECK(!of(CodecId::kHistSparse, "x").any());
  CHECK(of(CodecId::kGroupDelta, "").groups);
  CHECK(of(CodecId::kHistSparseGrouped, "", true).groups);
  CHECK(of(CodecId::kHistResidual, "").hists);
  CHECK(of(CodecId::kSumResidual, "").prediction);
  // hist-window: by the flag bits of its first payload byte.
  const char grouped[] = {static_cast<char>(kHistWindowGrouped)};
  const char implied[] = {static_cast<char>(kHistWindowImplied | kHistWindowSegments)};
  const char both[] = {static_cast<char>(kHistWindowGrouped | kHistWindowImplied)};
  CHECK(of(CodecId::kHistWindow, {grouped, 1}).groups);
  CHECK(!of(CodecId::kHistWindow, {grouped, 1}).counts);
  CHECK(of(CodecId::kHistWindow, {implied, 1}).counts);
  CHECK(!of(CodecId::kHistWindow, {implied, 1}).groups);
  CHECK((of(CodecId::kHistWindow, {both, 1}).groups && of(CodecId::kHistWindow, {both, 1}).counts));
  CHECK(!of(CodecId::kHistWindow, "").any());
  CHECK(!of(CodecId::kHistWindow, {both, 1}, true).any());  // no valid chunk: its decoder refuses it
}
