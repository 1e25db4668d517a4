#include "storage/sealer.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include <rocksdb/write_batch.h>

#include "storage/chunk_reader.h"
#include "storage/chunk_writer.h"
#include "storage/keys.h"

namespace argus::storage {

Status Sealer::run(bool all, SealStats* stats) {
  // The blocks come from the head index, not from iterating the head: sealed entries leave
  // tombstones that an iterator walks until compaction drops them, so a pass over the head
  // read the whole sealed history. Each block is read by a seek bounded to its rank.
  const std::vector<HeadIndex::Block> blocks = h_.head_index->blocks();
  // One snapshot for the pass: the seal batches written meanwhile do not move it.
  const rocksdb::Snapshot* snapshot = h_.db->GetSnapshot();
  struct Release {
    rocksdb::DB* db;
    const rocksdb::Snapshot* s;
    ~Release() { db->ReleaseSnapshot(s); }
  } release{h_.db, snapshot};
  // One iterator per rank, bounded to the rank's keys (the bound is fixed for an
  // iterator's life: RocksDB does not promise that a changed one is honoured).
  std::string upper;
  rocksdb::Slice upper_slice;
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  ro.snapshot = snapshot;
  ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it;
  uint32_t it_job = 0, it_rank = 0;
  // A failing block is logged, counted and skipped; the pass goes on (C3).
  Status first_error;
  auto fail = [&](const std::string& what, const Status& s) {
    ++stats->failed_blocks;
    std::fprintf(stderr, "argus sealer: skipping %s: %s\n", what.c_str(), s.toString().c_str());
    if (first_error.isOk()) first_error = s.withContext(what);
  };
  for (size_t b = 0; b < blocks.size(); ++b) {
    const HeadIndex::Block& k = blocks[b];
    // A later block of the rank makes this one complete; the rank's last block stays open.
    const bool later = b + 1 < blocks.size() && blocks[b + 1].job == k.job && blocks[b + 1].rank == k.rank;
    if (!all && !later) continue;
    const uint64_t base = k.block_base;
    const bool has_next_block = base <= UINT64_MAX - h_.block_steps;
    if (!it || it_job != k.job || it_rank != k.rank) {
      it.reset();  // before its bound changes
      it_job = k.job;
      it_rank = k.rank;
      upper = prefixSuccessor(headPrefix(k.job, k.rank));
      upper_slice = rocksdb::Slice(upper);
      it.reset(h_.db->NewIterator(ro, h_.head));
    }
    if (!all) {
      // The later block must be in the snapshot, not only listed: a write adds to the index
      // before it commits, and a block's last entries can be in the same write as the next
      // block's first. Sealing before they land would orphan their chains (head_entry.h).
      if (has_next_block) it->Seek(headPrefix(k.job, k.rank, base + h_.block_steps));
      ARGUS_RETURN_IF_ERROR(fromRocks(it->status(), "sealer: iterating head"));
      if (!has_next_block || !it->Valid()) continue;
    }
    // Decode the block's entries straight from the iterator into reused records (their
    // lists and histograms keep their capacity from the previous block).
    head_.clear();
    keys_.clear();
    keys_bytes_ = 0;
    Status bs;
    for (it->Seek(headPrefix(k.job, k.rank, base)); it->Valid(); it->Next()) {
      HeadKey r;
      std::string_view key(it->key().data(), it->key().size());
      if (!decodeHeadKey(key, &r)) {
        bs = Status::corruption("malformed head key: " + describeKey(kHeadCf, key));
        break;
      }
      if (r.job != k.job || r.rank != k.rank || r.block_base != base) break;
      bs = head_.add(r, std::string_view(it->value().data(), it->value().size()));
      if (!bs.isOk()) break;
      keys_.push_back(r);
      keys_bytes_ += key.size() + it->value().size();
    }
    // The iterator itself failing is not one block's problem: end the pass.
    ARGUS_RETURN_IF_ERROR(fromRocks(it->status(), "sealer: iterating head"));
    if (bs.isOk()) bs = sealBlock(k.job, k.rank, base, stats);
    if (!bs.isOk()) fail("block job=" + std::to_string(k.job) + " rank=" + std::to_string(k.rank) + " step_base=" + std::to_string(base), bs);
  }
  if (!first_error.isOk() && stats->failed_blocks > 1) {
    return Status::fromCode(first_error.code(), std::to_string(stats->failed_blocks) + " blocks not sealed (sealed the rest); first: " + first_error.message());
  }
  return first_error;
}

Status Sealer::writeRecords(uint32_t job, uint32_t rank, uint16_t attempt, uint64_t base, std::vector<model::StepRecord*>& recs) {
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
    // A block the reader would refuse is never written (I1): it stays in head.
    Status ok = ChunkWriter::checkBlock(tb, hooks_.max_block_rows);
    if (ok.isOk()) {
      chunks_.clear();
      ChunkWriter::writeBlock(job, rank, attempt, base, tb, &chunks_, &hints_);
      for (const ChunkKV& kv : chunks_) batch_.Put(h_.chunk, kv.key, kv.value);
    }
    if (t == Table::kKernels) {
      auto& hists = tb.columns[histColumnOf(t)].hists;
      size_t i = 0;
      for (model::StepRecord* rec : recs) {
        for (auto& k : rec->kernels) k.hist = std::move(hists[i++]);
      }
    }
    if (!ok.isOk()) return ok.withContext("attempt " + std::to_string(attempt));
  }
  return Status::ok();
}

Status Sealer::sealBlock(uint32_t job, uint32_t rank, uint64_t base, SealStats* stats) {
  if (keys_.empty()) return Status::ok();
  std::vector<model::StepRecord*>& rows = head_.sorted();
  batch_.Clear();
  rocksdb::ReadOptions ro;
  ChunkGetter get = [&](const std::string& key, std::string* buffer, std::string_view* value) -> Status {
    rocksdb::Status s = h_.db->Get(ro, h_.chunk, key, buffer);
    if (s.IsNotFound()) return Status::notFound(describeKey(kChunkCf, key));
    ARGUS_RETURN_IF_ERROR(fromRocks(s, "reading chunk"));
    *value = *buffer;
    return Status::ok();
  };
  // Rows come in (step, attempt) order; each attempt is its own chunk set. Attempts are
  // few (usually one): walk the distinct ones in ascending order.
  std::vector<model::StepRecord*> head_records;
  uint64_t sets = 0, merged_sets = 0;  // counted into stats only once the batch commits
  uint32_t attempt = 0;  // next attempt to look for (uint32 so 65535 can end the loop)
  while (attempt <= UINT16_MAX) {
    uint32_t lowest = UINT32_MAX;
    for (const model::StepRecord* rec : rows) {
      if (rec->attempt >= attempt && rec->attempt < lowest) lowest = rec->attempt;
    }
    if (lowest == UINT32_MAX) break;
    auto att = static_cast<uint16_t>(lowest);
    attempt = lowest + 1;
    head_records.clear();
    for (model::StepRecord* rec : rows) {
      if (rec->attempt == att) head_records.push_back(rec);
    }

    // Merge with what an earlier seal of this block wrote (re-delivered rows).
    ChunkKey at{job, Table::kSteps, kStepsColumnId, base, rank, att};
    std::string steps_buffer;
    std::string_view steps_value;
    Status found = get(encodeChunkKey(at), &steps_buffer, &steps_value);
    if (found.isNotFound()) {
      ARGUS_RETURN_IF_ERROR(writeRecords(job, rank, att, base, head_records));
    } else if (!found.isOk()) {
      return found;
    } else {
      TableBlock old[kTableCount];
      uint64_t read = 0;
      ChunkReader::KnownChunk steps_layout{kStepsColumnId, {}};
      ARGUS_RETURN_IF_ERROR(ChunkReader::verify(encodeChunkKey(at), steps_value, &steps_layout.view));
      for (Table t : kAllTables) {
        at.table = t;
        ARGUS_RETURN_IF_ERROR(ChunkReader::readBlock(at, nullptr, get, &old[tableIndex(t)], &read, t == Table::kSteps ? &steps_layout : nullptr));
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
      ARGUS_RETURN_IF_ERROR(writeRecords(job, rank, att, base, merged));
      ++merged_sets;
    }
    ++sets;
  }
  // Exactly the entries read: head keys are never rewritten, so an entry written since
  // (a re-delivery) has a key of its own and stays for the next pass (I2).
  char key[kHeadKeySize];
  for (const HeadKey& k : keys_) {
    encodeHeadKeyTo(k, key);
    batch_.Delete(h_.head, rocksdb::Slice(key, sizeof key));
  }
  if (hooks_.before_commit) hooks_.before_commit(job, rank, base);
  rocksdb::WriteOptions wo;  // not synced: the batch is atomic, and until it lands the entries stay
  ARGUS_RETURN_IF_ERROR(fromRocks(h_.db->Write(wo, &batch_), "sealer: writing block"));
  h_.head_index->remove(job, rank, base, static_cast<uint32_t>(keys_.size()));
  stats->blocks += sets;
  stats->merged += merged_sets;
  stats->head_rows += rows.size();
  if (head_.orphaned() > 0) {
    // Only unacknowledged writes can lose their chain's start (head_entry.h); the client
    // re-sent them in a later session.
    std::fprintf(stderr, "argus sealer: job=%u rank=%u step_base=%llu: dropped %llu unacknowledged records whose chain start was never written\n",
                 job, rank, static_cast<unsigned long long>(base), static_cast<unsigned long long>(head_.orphaned()));
    stats->orphaned += head_.orphaned();
  }
  stats->head_bytes += keys_bytes_;
  return Status::ok();
}

}  // namespace argus::storage
