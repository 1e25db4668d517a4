#include "storage/sealer.h"

#include <algorithm>
#include <memory>

#include <rocksdb/write_batch.h>

#include "model/step_codec.h"
#include "storage/chunk_reader.h"
#include "storage/chunk_writer.h"
#include "storage/keys.h"

namespace argus::storage {

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
    // Decode the block's rows straight from the iterator into reused records (their lists
    // and histograms keep their capacity from the previous block).
    size_t n = 0;
    for (; it->Valid(); it->Next()) {
      HeadKey r;
      ARGUS_RETURN_IF_ERROR(keyOf(&r));
      if (r.job != k.job || r.rank != k.rank || h_.blockBase(r.step) != base) break;
      if (n == records_.size()) {
        records_.emplace_back();
        keys_.emplace_back();
      }
      model::StepRecord& rec = records_[n];
      Status s = model::decodeStandalone(std::string_view(it->value().data(), it->value().size()), &rec);
      if (!s.isOk()) return Status::corruption(describeKey(kHeadCf, std::string_view(it->key().data(), it->key().size())) + ": " + s.message());
      // The key is the row's identity; the value cannot contradict it.
      rec.rank = r.rank;
      rec.step = r.step;
      rec.attempt = r.attempt;
      keys_[n++] = r;
    }
    ARGUS_RETURN_IF_ERROR(fromRocks(it->status(), "sealer: iterating head"));
    ARGUS_RETURN_IF_ERROR(sealBlock(k.job, k.rank, base, n, stats));
  }
  return fromRocks(it->status(), "sealer: iterating head");
}

void Sealer::writeRecords(uint32_t job, uint32_t rank, uint16_t attempt, uint64_t base, std::vector<model::StepRecord*>& recs) {
  for (Table t : kAllTables) {
    TableBlock& tb = tables_[tableIndex(t)];
    tb.reset(t);
    // Kernels is the only table that reads histograms: it borrows them from the records
    // and hands them back below, so neither side allocates per histogram.
    if (t == Table::kKernels) {
      for (model::StepRecord* rec : recs) tb.append(std::move(*rec));
    } else {
      for (const model::StepRecord* rec : recs) tb.append(*rec);
    }
    chunks_.clear();
    ChunkWriter::writeBlock(job, rank, attempt, base, tb, &chunks_, &hints_);
    for (const ChunkKV& kv : chunks_) batch_.Put(h_.chunk, kv.key, kv.value);
    if (t == Table::kKernels) {
      auto& hists = tb.columns[histColumnOf(t)].hists;
      size_t i = 0;
      for (model::StepRecord* rec : recs) {
        for (auto& k : rec->kernels) k.hist = std::move(hists[i++]);
      }
    }
  }
}

Status Sealer::sealBlock(uint32_t job, uint32_t rank, uint64_t base, size_t n, SealStats* stats) {
  if (n == 0) return Status::ok();
  batch_.Clear();
  rocksdb::ReadOptions ro;
  ChunkGetter get = [&](const std::string& key, std::string* value) -> Status {
    rocksdb::Status s = h_.db->Get(ro, h_.chunk, key, value);
    if (s.IsNotFound()) return Status::notFound(describeKey(kChunkCf, key));
    return fromRocks(s, "reading chunk");
  };
  // Rows arrive in (step, attempt) order; each attempt is its own chunk set. Attempts are
  // few (usually one): walk the distinct ones in ascending order.
  std::vector<model::StepRecord*> head_records;
  uint32_t attempt = 0;  // next attempt to look for (uint32 so 65535 can end the loop)
  while (attempt <= UINT16_MAX) {
    uint32_t lowest = UINT32_MAX;
    for (size_t i = 0; i < n; ++i) {
      if (keys_[i].attempt >= attempt && keys_[i].attempt < lowest) lowest = keys_[i].attempt;
    }
    if (lowest == UINT32_MAX) break;
    auto att = static_cast<uint16_t>(lowest);
    attempt = lowest + 1;
    head_records.clear();
    for (size_t i = 0; i < n; ++i) {
      if (keys_[i].attempt == att) head_records.push_back(&records_[i]);
    }

    // Merge with what an earlier seal of this block wrote (re-delivered rows).
    ChunkKey at{job, Table::kSteps, kStepsColumnId, base, rank, att};
    std::string steps_value;
    Status found = get(encodeChunkKey(at), &steps_value);
    if (found.isNotFound()) {
      writeRecords(job, rank, att, base, head_records);
    } else if (!found.isOk()) {
      return found;
    } else {
      TableBlock old[kTableCount];
      uint64_t read = 0;
      for (Table t : kAllTables) {
        at.table = t;
        ARGUS_RETURN_IF_ERROR(ChunkReader::readBlock(at, nullptr, get, &old[tableIndex(t)], &read, t == Table::kSteps ? &steps_value : nullptr));
      }
      std::vector<model::StepRecord> old_records;
      ARGUS_RETURN_IF_ERROR(recordsFromBlocks(rank, att, old, &old_records));
      // Both lists are sorted by step; head wins a tie (same identity, newest delivery).
      std::vector<model::StepRecord*> merged;
      size_t i = 0, j = 0;
      while (i < old_records.size() || j < head_records.size()) {
        if (j == head_records.size() || (i < old_records.size() && old_records[i].step < head_records[j]->step)) {
          merged.push_back(&old_records[i++]);
        } else {
          if (i < old_records.size() && old_records[i].step == head_records[j]->step) ++i;
          merged.push_back(head_records[j++]);
        }
      }
      writeRecords(job, rank, att, base, merged);
      ++stats->merged;
    }
    ++stats->blocks;
  }
  char key[kHeadKeySize];
  for (size_t i = 0; i < n; ++i) {
    encodeHeadKeyTo(keys_[i], key);
    batch_.Delete(h_.head, rocksdb::Slice(key, sizeof key));
  }
  stats->head_rows += n;
  rocksdb::WriteOptions wo;  // not synced: the batch is atomic, and until it lands the head rows stay
  return fromRocks(h_.db->Write(wo, &batch_), "sealer: writing block");
}

}  // namespace argus::storage
