// ChunkReader::readBlock over chunks written today and chunks as older writers coded them
// (docs/format/codecs.md: sum-residual predictors stay readable after writers drop them).
#include <doctest/doctest.h>

#include <map>
#include <random>

#include "storage/chunk_reader.h"
#include "storage/chunk_writer.h"
#include "storage/column_codec.h"
#include "storage/keys.h"

using namespace argus;
using namespace argus::storage;

namespace {

constexpr uint8_t kForward = 7, kBackward = 8, kOptimizer = 9, kCompute = 11;

// A steps block of `n` rows whose compute_ns is forward + backward + optimizer plus a little.
TableBlock stepsBlock(size_t n) {
  TableBlock b;
  b.reset(Table::kSteps);
  b.rows = n;
  for (size_t i = 0; i < n; ++i) b.steps.push_back(static_cast<int64_t>(i));
  for (const ColumnDef& d : tableColumns(Table::kSteps)) {
    if (d.id < kFirstStoredColumnId || d.type == ColumnType::kHistogram) continue;
    for (size_t i = 0; i < n; ++i) b.columns[d.id].ints.push_back(static_cast<int64_t>(1000 * d.id + 37 * i % 101));
  }
  auto& c = b.columns[kCompute].ints;
  for (size_t i = 0; i < n; ++i) {
    c[i] = b.columns[kForward].ints[i] + b.columns[kBackward].ints[i] + b.columns[kOptimizer].ints[i] + static_cast<int64_t>(i % 3);
  }
  return b;
}

std::map<std::string, std::string> chunksOf(const TableBlock& b) {
  std::vector<ChunkKV> kvs;
  ChunkWriter::writeBlock(1, 0, 0, 0, b, &kvs);
  std::map<std::string, std::string> out;
  for (auto& kv : kvs) out[kv.key] = kv.value;
  return out;
}

ChunkGetter getterOf(const std::map<std::string, std::string>& chunks, std::vector<uint8_t>* fetched) {
  return [&chunks, fetched](const std::string& key, std::string*, std::string_view* value) {
    auto it = chunks.find(key);
    if (it == chunks.end()) return Status::notFound(describeKey(kChunkCf, key));
    ChunkKey k;
    REQUIRE(decodeChunkKey(key, &k));
    fetched->push_back(k.column);
    *value = it->second;  // the map outlives the read
    return Status::ok();
  };
}

std::string computeKey() { return encodeChunkKey(ChunkKey{1, Table::kSteps, kCompute, 0, 0, 0}); }

}  // namespace

TEST_CASE("steps.compute_ns is written on its own: reading it alone fetches _steps and it, nothing else") {
  TableBlock b = stepsBlock(40);
  auto chunks = chunksOf(b);
  ChunkView v;
  REQUIRE(parseChunk(chunks.at(computeKey()), &v).isOk());
  CHECK((v.codec & kCodecIdMask) != static_cast<uint8_t>(CodecId::kSumResidual));

  std::vector<uint8_t> fetched;
  std::vector<uint8_t> wanted{kCompute};
  TableBlock back;
  uint64_t read = 0;
  REQUIRE(ChunkReader::readBlock(ChunkKey{1, Table::kSteps, kStepsColumnId, 0, 0, 0}, &wanted, getterOf(chunks, &fetched), &back, &read).isOk());
  CHECK(fetched == std::vector<uint8_t>{kStepsColumnId, kCompute});
  CHECK(back.columns[kCompute].ints == b.columns[kCompute].ints);
}

TEST_CASE("a block read again holds the columns of the new read only, after a failed read too") {
  TableBlock b = stepsBlock(40);
  auto chunks = chunksOf(b);
  std::vector<uint8_t> fetched;
  const ChunkKey at{1, Table::kSteps, kStepsColumnId, 0, 0, 0};
  TableBlock back;
  uint64_t read = 0;
  std::vector<uint8_t> compute{kCompute}, forward{kForward};
  REQUIRE(ChunkReader::readBlock(at, &compute, getterOf(chunks, &fetched), &back, &read).isOk());
  CHECK(back.columns[kCompute].ints == b.columns[kCompute].ints);
  CHECK(back.columns[kForward].ints.empty());

  REQUIRE(ChunkReader::readBlock(at, &forward, getterOf(chunks, &fetched), &back, &read).isOk());
  CHECK(back.columns[kForward].ints == b.columns[kForward].ints);
  CHECK(back.columns[kCompute].ints.empty());  // kept for reuse during the read, then emptied

  // A read that fails after compute_ns leaves it filled; the next good read empties it.
  auto broken = chunks;
  broken.erase(encodeChunkKey(ChunkKey{1, Table::kSteps, kForward, 0, 0, 0}));
  std::vector<uint8_t> both{kCompute, kForward};
  CHECK(ChunkReader::readBlock(at, &both, getterOf(broken, &fetched), &back, &read).isCorruption());
  REQUIRE(ChunkReader::readBlock(at, &forward, getterOf(chunks, &fetched), &back, &read).isOk());
  CHECK(back.columns[kForward].ints == b.columns[kForward].ints);
  CHECK(back.columns[kCompute].ints.empty());

  // After append (every column filled) a read empties all it does not fill.
  back = b;
  REQUIRE(ChunkReader::readBlock(at, &compute, getterOf(chunks, &fetched), &back, &read).isOk());
  CHECK(back.columns[kCompute].ints == b.columns[kCompute].ints);
  CHECK(back.columns[kForward].ints.empty());
}

TEST_CASE("a compute_ns chunk coded against forward + backward + optimizer, as older writers did, still reads") {
  TableBlock b = stepsBlock(40);
  auto chunks = chunksOf(b);
  std::vector<int64_t> prediction;
  b.predict(*sumPredictorOf(Table::kSteps, kCompute), &prediction);
  RowContext ctx;
  ctx.prediction = prediction;
  std::string payload;
  REQUIRE(encodeIntsWith(CodecId::kSumResidual, b.columns[kCompute].ints, &ctx, &payload));
  ChunkView old;
  REQUIRE(parseChunk(chunks.at(computeKey()), &old).isOk());
  chunks[computeKey()] = encodeChunk(old.type, static_cast<uint8_t>(CodecId::kSumResidual), old.stats, payload);

  std::vector<uint8_t> fetched;
  std::vector<uint8_t> wanted{kCompute};
  TableBlock back;
  uint64_t read = 0;
  REQUIRE(ChunkReader::readBlock(ChunkKey{1, Table::kSteps, kStepsColumnId, 0, 0, 0}, &wanted, getterOf(chunks, &fetched), &back, &read).isOk());
  CHECK(back.columns[kCompute].ints == b.columns[kCompute].ints);
  CHECK(fetched.size() == 5);  // _steps, the three terms, compute_ns

  // Without its terms the residuals mean nothing: a missing term is named corruption.
  chunks.erase(encodeChunkKey(ChunkKey{1, Table::kSteps, kBackward, 0, 0, 0}));
  Status s = ChunkReader::readBlock(ChunkKey{1, Table::kSteps, kStepsColumnId, 0, 0, 0}, &wanted, getterOf(chunks, &fetched), &back, &read);
  CHECK(s.isCorruption());
}

TEST_CASE("steps without gaps come from the layout chunk's header; steps with gaps from its payload") {
  const std::string steps_key = encodeChunkKey(ChunkKey{1, Table::kSteps, kStepsColumnId, 0, 0, 0});
  std::vector<uint8_t> wanted{kCompute};
  std::vector<uint8_t> fetched;
  // The layout chunk with its payload replaced by bytes no codec decodes (header and checksum kept right).
  auto garbled = [&](std::map<std::string, std::string> chunks) {
    ChunkView v;
    REQUIRE(parseChunk(chunks.at(steps_key), &v).isOk());
    chunks[steps_key] = encodeChunk(v.type, v.codec, v.stats, std::string(3, '\xff'));
    return chunks;
  };
  auto read = [&](const std::map<std::string, std::string>& chunks, TableBlock* back) {
    uint64_t n = 0;
    return ChunkReader::readBlock(ChunkKey{1, Table::kSteps, kStepsColumnId, 0, 0, 0}, &wanted, getterOf(chunks, &fetched), back, &n);
  };

  TableBlock b = stepsBlock(40);
  TableBlock back;
  REQUIRE(read(garbled(chunksOf(b)), &back).isOk());
  CHECK(back.steps == b.steps);
  CHECK(back.columns[kCompute].ints == b.columns[kCompute].ints);

  for (size_t i = 0; i < b.steps.size(); ++i) b.steps[i] = static_cast<int64_t>(3 * i + i % 2);
  auto chunks = chunksOf(b);
  REQUIRE(read(chunks, &back).isOk());
  CHECK(back.steps == b.steps);
  CHECK(read(garbled(chunks), &back).isCorruption());
}

TEST_CASE("a gapless layout header below its block's first step is corruption") {
  TableBlock b = stepsBlock(10);
  std::vector<ChunkKV> kvs;
  ChunkWriter::writeBlock(1, 0, 0, 256, b, &kvs);  // steps 0..9 claimed by the block at 256
  std::map<std::string, std::string> chunks;
  for (auto& kv : kvs) chunks[kv.key] = kv.value;
  std::vector<uint8_t> fetched;
  TableBlock back;
  uint64_t n = 0;
  Status s = ChunkReader::readBlock(ChunkKey{1, Table::kSteps, kStepsColumnId, 256, 0, 0}, nullptr, getterOf(chunks, &fetched), &back, &n);
  CHECK(s.isCorruption());
  CHECK(s.message().find("steps not ascending") != std::string::npos);
}

TEST_CASE("a steps block read for a step range decodes bit-packed columns only there") {
  TableBlock b = stepsBlock(100);
  std::mt19937_64 rng(5);
  for (auto& x : b.columns[kCompute].ints) x = 50'000'000 + static_cast<int64_t>(rng() % 100'000);  // step times: bit-packed
  auto chunks = chunksOf(b);
  ChunkView v;
  REQUIRE(parseChunk(chunks.at(computeKey()), &v).isOk());
  REQUIRE(v.codec == static_cast<uint8_t>(CodecId::kBitPack));

  std::vector<uint8_t> fetched;
  std::vector<uint8_t> wanted{kCompute};
  TableBlock back;
  uint64_t read = 0;
  REQUIRE(ChunkReader::readBlock(ChunkKey{1, Table::kSteps, kStepsColumnId, 0, 0, 0}, &wanted, getterOf(chunks, &fetched), &back, &read, nullptr, 30,
                                 45)
              .isOk());
  REQUIRE(back.steps == b.steps);
  const auto& got = back.columns[kCompute].ints;
  REQUIRE(got.size() == 100);
  // Rows 30-44 and the rest of the blocks of eight around them (24-47) decode, no others.
  for (size_t i = 0; i < 100; ++i) {
    CAPTURE(i);
    if (i >= 30 && i < 45) {
      CHECK(got[i] == b.columns[kCompute].ints[i]);
    } else if (i < 24 || i >= 48) {
      CHECK(got[i] == 0);
    }
  }
  // Without a range every row decodes.
  REQUIRE(ChunkReader::readBlock(ChunkKey{1, Table::kSteps, kStepsColumnId, 0, 0, 0}, &wanted, getterOf(chunks, &fetched), &back, &read).isOk());
  CHECK(back.columns[kCompute].ints == b.columns[kCompute].ints);
}

TEST_CASE("a steps block read with a stored column in hand takes a gapless layout from its header and reads neither again") {
  std::vector<uint8_t> wanted{kCompute, kForward};
  auto readWith = [&](const std::map<std::string, std::string>& chunks, std::vector<uint8_t>* fetched, TableBlock* back, uint64_t* n) {
    ChunkReader::KnownChunk known{kCompute, {}};
    REQUIRE(parseChunk(chunks.at(computeKey()), &known.view).isOk());
    return ChunkReader::readBlock(ChunkKey{1, Table::kSteps, kCompute, 0, 0, 0}, &wanted, getterOf(chunks, fetched), back, n, &known);
  };

  TableBlock b = stepsBlock(40);
  std::vector<uint8_t> fetched;
  TableBlock back;
  uint64_t n = 0;
  REQUIRE(readWith(chunksOf(b), &fetched, &back, &n).isOk());
  CHECK(fetched == std::vector<uint8_t>{kForward});
  CHECK(n == 2);  // compute_ns and forward decoded; _steps not read
  CHECK(back.steps == b.steps);
  CHECK(back.columns[kCompute].ints == b.columns[kCompute].ints);
  CHECK(back.columns[kForward].ints == b.columns[kForward].ints);

  // With gaps the header cannot say which steps: _steps is read, and its absence is damage
  // (the stored column shows the block exists).
  for (size_t i = 0; i < b.steps.size(); ++i) b.steps[i] = static_cast<int64_t>(3 * i + i % 2);
  auto gapped = chunksOf(b);
  fetched.clear();
  REQUIRE(readWith(gapped, &fetched, &back, &n).isOk());
  CHECK(fetched == std::vector<uint8_t>{kStepsColumnId, kForward});
  CHECK(back.steps == b.steps);
  CHECK(back.columns[kCompute].ints == b.columns[kCompute].ints);
  gapped.erase(encodeChunkKey(ChunkKey{1, Table::kSteps, kStepsColumnId, 0, 0, 0}));
  Status s = readWith(gapped, &fetched, &back, &n);
  CHECK(s.isCorruption());
  CHECK(s.message().find("chunk missing while its block layout exists") != std::string::npos);

  // A stored column's rows must agree with the layout it gave: another column's count is checked.
  b = stepsBlock(40);
  auto chunks = chunksOf(b);
  TableBlock shorter = stepsBlock(39);
  chunks[encodeChunkKey(ChunkKey{1, Table::kSteps, kForward, 0, 0, 0})] = chunksOf(shorter).at(encodeChunkKey(ChunkKey{1, Table::kSteps, kForward, 0, 0, 0}));
  CHECK(readWith(chunks, &fetched, &back, &n).isCorruption());

  // Only a steps-table block has a layout in every column's header.
  ChunkReader::KnownChunk known{kCompute, {}};
  REQUIRE(parseChunk(chunksOf(b).at(computeKey()), &known.view).isOk());
  CHECK(ChunkReader::readBlock(ChunkKey{1, Table::kKernels, 6, 0, 0, 0}, nullptr, getterOf(chunks, &fetched), &back, &n, &known).code() == Status::Code::kInvalidArgument);
  // Nor a column id the steps table does not have.
  known.column = 200;
  Status bad = ChunkReader::readBlock(ChunkKey{1, Table::kSteps, 200, 0, 0, 0}, nullptr, getterOf(chunks, &fetched), &back, &n, &known);
  CHECK(bad.code() == Status::Code::kInvalidArgument);
  CHECK(bad.message().find("known column 200 is not in the steps table") != std::string::npos);
}
