// Fuzzes the sealed-block read path: storage::ChunkReader::readBlock for each of the five
// tables of one (rank, attempt) block, then storage::recordsFromBlocks.
//
// Input: one flags byte, then pieces joined by fuzz::kSeparator, each a chunk:
//   u8 table, u8 column id, chunk value
// served to readBlock as the chunk column family of job 1, step_base 0, rank 0, attempt 0.
// Unless flags bit 0 is set, each value's last 8 bytes are replaced by the right checksum
// first, so mutations reach the codecs (chunk_format_fuzz covers the checksum itself).
// Invariants: a block that reads has every column at its row count; it re-seals
// (ChunkWriter::writeBlock) and reads back to the same block; records rebuilt from the
// five blocks turn back into blocks (TableBlock::append) that rebuild the same records
// (a nested table that does not read takes part as an empty one).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "storage/chunk_format.h"
#include "storage/chunk_reader.h"
#include "storage/chunk_writer.h"
#include "storage/keys.h"
#include "storage/table_block.h"
#include "tests/fuzz/fuzz_util.h"

using namespace argus::storage;
using argus::Status;

namespace {

constexpr uint32_t kJob = 1;
constexpr uint64_t kStepBase = 0;

using ChunkMap = std::map<std::string, std::string>;

ChunkGetter getterOf(const ChunkMap& chunks) {
  return [&chunks](const std::string& key, std::string*, std::string_view* value) -> Status {
    auto it = chunks.find(key);
    if (it == chunks.end()) return Status::notFound("no chunk");
    *value = it->second;
    return Status::ok();
  };
}

ChunkKey blockKey(Table t) { return ChunkKey{kJob, t, 0, kStepBase, 0, 0}; }

bool sameBlock(const TableBlock& a, const TableBlock& b) {
  if (a.table != b.table || a.steps != b.steps || a.row_counts != b.row_counts || a.rows != b.rows) return false;
  if (a.columns.size() != b.columns.size()) return false;
  for (size_t i = kFirstStoredColumnId; i < a.columns.size(); ++i) {
    const Column& x = a.columns[i];
    const Column& y = b.columns[i];
    if (x.type != y.type || x.ints != y.ints || x.hists != y.hists) return false;
  }
  return true;
}

void checkBlock(const TableBlock& b) {
  FUZZ_CHECK(b.steps.size() == b.row_counts.size() || !isNestedTable(b.table));
  FUZZ_CHECK(b.rowOffsets().back() == b.rows);
  for (const ColumnDef& d : tableColumns(b.table)) {
    if (d.id >= kFirstStoredColumnId) FUZZ_CHECK(b.columns[d.id].size() == b.rows);
  }
}

void checkReseal(const TableBlock& b) {
  if (b.steps.empty()) return;  // writeBlock REQUIRES steps
  std::vector<ChunkKV> kvs;
  ChunkWriter::writeBlock(kJob, 0, 0, kStepBase, b, &kvs);
  ChunkMap resealed;
  for (auto& kv : kvs) resealed[kv.key] = kv.value;
  TableBlock back;
  uint64_t chunks_read = 0;
  Status s = ChunkReader::readBlock(blockKey(b.table), nullptr, getterOf(resealed), &back, &chunks_read);
  if (!s.isOk()) std::fprintf(stderr, "re-sealed block of %s does not read: %s\n", tableName(b.table), s.toString().c_str());
  FUZZ_CHECK(s.isOk());
  FUZZ_CHECK(sameBlock(back, b));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  bool keep_checksums = data[0] & 1;
  ChunkMap chunks;
  for (std::string_view piece : argus::fuzz::splitPieces(argus::fuzz::asView(data + 1, size - 1), 96)) {
    if (piece.size() < 2) continue;
    ChunkKey key = blockKey(static_cast<Table>(static_cast<uint8_t>(piece[0])));
    key.column = static_cast<uint8_t>(piece[1]);
    std::string value(piece.substr(2));
    if (!keep_checksums && value.size() >= 8) {
      std::string sum;
      argus::ByteWriter(&sum).putFixedLE(chunkChecksum(std::string_view(value).substr(0, value.size() - 8)), 8);
      value.replace(value.size() - 8, 8, sum);
    }
    chunks[encodeChunkKey(key)] = std::move(value);
  }

  TableBlock blocks[kTableCount];
  bool read[kTableCount] = {};
  for (Table t : kAllTables) {
    TableBlock& b = blocks[tableIndex(t)];
    uint64_t chunks_read = 0;
    if (!ChunkReader::readBlock(blockKey(t), nullptr, getterOf(chunks), &b, &chunks_read).isOk()) continue;
    read[tableIndex(t)] = true;
    checkBlock(b);
    checkReseal(b);
  }
  if (!read[tableIndex(Table::kSteps)]) return 0;
  // A nested table that did not read stands in as one with no rows, so that most inputs
  // reach recordsFromBlocks instead of only those whose five tables all survived mutation.
  for (Table t : kAllTables) {
    TableBlock& b = blocks[tableIndex(t)];
    if (read[tableIndex(t)]) continue;
    b.reset(t);
    b.steps = blocks[tableIndex(Table::kSteps)].steps;
    b.row_counts.assign(b.steps.size(), 0);
  }

  std::vector<argus::model::StepRecord> records;
  if (!recordsFromBlocks(0, 0, blocks, &records).isOk()) return 0;
  FUZZ_CHECK(records.size() == blocks[0].steps.size());
  TableBlock rebuilt[kTableCount];
  for (Table t : kAllTables) rebuilt[tableIndex(t)].reset(t);
  for (const auto& rec : records) {
    for (TableBlock& b : rebuilt) b.append(rec);
  }
  std::vector<argus::model::StepRecord> again;
  Status s = recordsFromBlocks(0, 0, rebuilt, &again);
  FUZZ_CHECK(s.isOk());
  FUZZ_CHECK(again == records);
  return 0;
}
