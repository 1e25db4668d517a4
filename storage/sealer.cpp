#include "storage/sealer.h"

#include <algorithm>
#include <map>
#include <memory>

#include <rocksdb/write_batch.h>

#include "model/step_codec.h"
#include "storage/chunk_reader.h"
#include "storage/chunk_writer.h"
#include "storage/keys.h"

namespace argus::storage {

struct Sealer::Row {
  HeadKey key;
  std::string raw_key;
  std::string value;
};

Status Sealer::run(bool all, SealStats* stats) {
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  // One iterator, one implicit snapshot: the seal batches written meanwhile do not move it.
  std::unique_ptr<rocksdb::Iterator> it(h_.db->NewIterator(ro, h_.head));
  auto keyOf = [&](HeadKey* k) -> Status {
    std::string_view key(it->key().data(), it->key().size());
    if (!decodeHeadKey(key, k)) return Status::corruption("malformed head key: " + describeKey(kHeadCf, key));
    return Status::ok();
  };
  std::vector<Row> block;
  it->SeekToFirst();
  while (it->Valid()) {
    HeadKey k;
    ARGUS_RETURN_IF_ERROR(keyOf(&k));
    uint64_t base = h_.blockBase(k.step);
    std::string rank_prefix = headPrefix(k.job, k.rank);
    bool sealable = all;
    if (!sealable && base <= UINT64_MAX - h_.block_steps) {
      // A later block of this rank in head makes this one complete. Probe by a seek, so
      // the rows of a rank's last (open) block are never read.
      it->Seek(headKeyPrefix(k.job, k.rank, base + h_.block_steps));
      sealable = it->Valid() && it->key().starts_with(rank_prefix);
      it->Seek(headKeyPrefix(k.job, k.rank, base));
    }
    if (!sealable) {
      // Next rank (or the next job after the last rank).
      std::string next = prefixSuccessor(rank_prefix);
      if (next.empty()) break;
      it->Seek(next);
      continue;
    }
    block.clear();
    for (; it->Valid(); it->Next()) {
      HeadKey r;
      ARGUS_RETURN_IF_ERROR(keyOf(&r));
      if (r.job != k.job || r.rank != k.rank || h_.blockBase(r.step) != base) break;
      block.push_back(Row{r, it->key().ToString(), it->value().ToString()});
    }
    ARGUS_RETURN_IF_ERROR(sealBlock(k.job, k.rank, base, block, stats));
  }
  return fromRocks(it->status(), "sealer: iterating head");
}

Status Sealer::sealBlock(uint32_t job, uint32_t rank, uint64_t base, std::vector<Row>& rows, SealStats* stats) {
  if (rows.empty()) return Status::ok();
  // Rows arrive in (step, attempt) order; each attempt is its own chunk set.
  std::map<uint16_t, std::vector<model::StepRecord>> by_attempt;
  for (const Row& r : rows) {
    model::StepRecord rec;
    Status s = model::decodeStandalone(r.value, &rec);
    if (!s.isOk()) return Status::corruption(describeKey(kHeadCf, r.raw_key) + ": " + s.message());
    // The key is the row's identity; the value cannot contradict it.
    rec.rank = r.key.rank;
    rec.step = r.key.step;
    rec.attempt = r.key.attempt;
    by_attempt[r.key.attempt].push_back(std::move(rec));
  }

  rocksdb::WriteBatch batch;
  rocksdb::ReadOptions ro;
  ChunkGetter get = [&](const std::string& key, std::string* value) -> Status {
    rocksdb::Status s = h_.db->Get(ro, h_.chunk, key, value);
    if (s.IsNotFound()) return Status::notFound(describeKey(kChunkCf, key));
    return fromRocks(s, "reading chunk");
  };
  std::vector<ChunkKV> chunks;
  for (auto& [attempt, head_records] : by_attempt) {
    // Merge with what an earlier seal of this block wrote (re-delivered rows).
    ChunkKey at{job, Table::kSteps, kStepsColumnId, base, rank, attempt};
    std::string steps_value;
    Status found = get(encodeChunkKey(at), &steps_value);
    std::vector<model::StepRecord> merged;
    if (found.isOk()) {
      TableBlock old[kTableCount];
      uint64_t read = 0;
      for (Table t : kAllTables) {
        at.table = t;
        ARGUS_RETURN_IF_ERROR(ChunkReader::readBlock(at, nullptr, get, &old[tableIndex(t)], &read, t == Table::kSteps ? &steps_value : nullptr));
      }
      std::vector<model::StepRecord> old_records;
      ARGUS_RETURN_IF_ERROR(recordsFromBlocks(rank, attempt, old, &old_records));
      // Both lists are sorted by step; head wins a tie (same identity, newest delivery).
      size_t i = 0, j = 0;
      while (i < old_records.size() || j < head_records.size()) {
        if (j == head_records.size() || (i < old_records.size() && old_records[i].step < head_records[j].step)) {
          merged.push_back(std::move(old_records[i++]));
        } else {
          if (i < old_records.size() && old_records[i].step == head_records[j].step) ++i;
          merged.push_back(std::move(head_records[j++]));
        }
      }
      ++stats->merged;
    } else if (found.isNotFound()) {
      merged = std::move(head_records);
    } else {
      return found;
    }
    TableBlock tb;
    for (Table t : kAllTables) {
      tb.reset(t);
      // Kernels is the only table that reads histograms: it may take them.
      if (t == Table::kKernels) {
        for (auto& rec : merged) tb.append(std::move(rec));
      } else {
        for (const auto& rec : merged) tb.append(rec);
      }
      chunks.clear();
      ChunkWriter::writeBlock(job, rank, attempt, base, tb, &chunks);
      for (const ChunkKV& kv : chunks) batch.Put(h_.chunk, kv.key, kv.value);
    }
    ++stats->blocks;
  }
  for (const Row& r : rows) batch.Delete(h_.head, r.raw_key);
  stats->head_rows += rows.size();
  rocksdb::WriteOptions wo;  // not synced: the batch is atomic, and until it lands the head rows stay
  return fromRocks(h_.db->Write(wo, &batch), "sealer: writing block");
}

}  // namespace argus::storage
