#include "storage/store_verifier.h"

#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <vector>

#include <rocksdb/sst_file_reader.h>

#include "storage/chunk_format.h"
#include "storage/chunk_reader.h"
#include "storage/db_handles.h"
#include "storage/head_entry.h"
#include "storage/keys.h"
#include "storage/table_block.h"

namespace argus::storage {

namespace {

class Verifier {
 public:
  Verifier(const RocksStore& store, const std::function<void(const std::string&)>& on_problem)
      : store_(store), h_(store.handles()), on_problem_(on_problem) {}

  Result<VerifyCounts> run() {
    for (const JobInfo& j : store_.listJobs()) jobs_.emplace(j.id, j.name);
    counts_.jobs = jobs_.size();
    for (const auto& [id, name] : jobs_) verifyMeta(name);
    ARGUS_RETURN_IF_ERROR(verifyHead());
    ARGUS_RETURN_IF_ERROR(listChunks());
    for (const SetKey& s : sets_) {
      if (!damaged_.contains(s)) ARGUS_RETURN_IF_ERROR(verifySet(s));
    }
    counts_.chunk_sets = sets_.size();
    return counts_;
  }

 private:
  // A chunk set: (job, table, block, rank, attempt).
  using SetKey = std::tuple<uint32_t, Table, uint64_t, uint32_t, uint16_t>;
  // A live SST file that failed its checksums; iterations skip its keys.
  struct DamagedFile {
    std::string cf, name, smallest, largest;
  };
  // A chunk readBlock fetched: its key, column and header stats.
  struct Header {
    std::string key;
    uint8_t column = 0;
    ChunkStats stats;
  };

  void problem(const std::string& text) {
    ++counts_.problems;
    on_problem_(text);
  }

  // Whether a key's job id is one meta names; an unnamed one is a problem once per id.
  bool knownJob(uint32_t job, const char* cf) {
    if (jobs_.contains(job)) return true;
    if (unnamed_jobs_.insert(job).second) problem(std::string(cf) + " entries of job id " + std::to_string(job) + ", which no job in meta names");
    return false;
  }

  void verifyMeta(const std::string& job) {
    auto check = [&](const char* what, const Status& s) {
      if (!s.isOk()) problem("job " + job + ": " + what + ": " + s.toString());
    };
    check("topology", store_.topology(job).status());
    check("kernel names", store_.kernelNames(job).status());
    check("stack names", store_.stackNames(job).status());
    check("names", store_.names(job).status());
  }

  // Every entry through the decoder scans use, per (job, rank) in key order (delta chains
  // run across the entries of a session and block).
  Status verifyHead() {
    HeadDecoder decoder(h_.block_steps);
    bool open = false;
    uint32_t job = 0, rank = 0;
    auto close = [&] {
      counts_.head_records += decoder.decoded();
      counts_.head_orphaned += decoder.orphaned();
      decoder.clear();
    };
    Status s = forEach(kHeadCf, h_.head, [&](std::string_view key, std::string_view value) {
      ++counts_.head_entries;
      HeadKey k;
      if (!decodeHeadKey(key, &k)) {
        problem(describeKey(kHeadCf, key) + ": not a head key");
        return;
      }
      knownJob(k.job, "head");
      if (!open || k.job != job || k.rank != rank) {
        if (open) close();
        open = true, job = k.job, rank = k.rank;
      }
      if (Status d = decoder.check(k, value); !d.isOk()) problem(d.toString());
    });
    if (open) close();
    return s;
  }

  // Every entry of `cf` in key order. A read error (a block failing its checksum) is reported;
  // then every live SST file is checked (checkFiles) and the iteration goes on past the key
  // range of the damaged file it ran into, reporting the range it could not read. Only an
  // error no damaged file explains ends it, as the returned Status.
  Status forEach(const char* cf_name, rocksdb::ColumnFamilyHandle* cf, const std::function<void(std::string_view, std::string_view)>& fn) {
    std::unique_ptr<rocksdb::Iterator> it(h_.db->NewIterator(rocksdb::ReadOptions(), cf));
    std::string last;  // the last key read, or the end of the last range skipped (keys are never empty)
    it->SeekToFirst();
    while (true) {
      for (; it->Valid(); it->Next()) {
        const std::string_view key(it->key().data(), it->key().size());
        fn(key, std::string_view(it->value().data(), it->value().size()));
        last.assign(key);
      }
      if (it->status().ok()) return Status::ok();
      const Status error = fromRocks(it->status(), std::string("verify: reading ") + cf_name);
      checkFiles();
      const DamagedFile* skip = nextDamaged(cf_name, last);
      if (skip == nullptr) return error;
      const std::string from = last.empty() ? "from " + describeKey(cf_name, skip->smallest) : "after " + describeKey(cf_name, last);
      problem(std::string(cf_name) + " entries " + from + " to " + describeKey(cf_name, skip->largest) + " (the end of damaged file " + skip->name +
              ") not checked: " + error.toString());
      last = skip->largest;
      it->Seek(last + '\0');  // the next key after it
    }
  }

  // The damaged file of `cf` whose key range ends first past `after` (empty: any).
  const DamagedFile* nextDamaged(std::string_view cf, const std::string& after) const {
    const DamagedFile* next = nullptr;
    for (const DamagedFile& f : damaged_files_) {
      if (f.cf != cf || f.largest <= after) continue;
      if (next == nullptr || f.largest < next->largest) next = &f;
    }
    return next;
  }

  // Each live SST file's block checksums, once: a damaged file is reported by name, level
  // and key range.
  void checkFiles() {
    if (files_checked_) return;
    files_checked_ = true;
    std::vector<rocksdb::LiveFileMetaData> files;
    h_.db->GetLiveFilesMetaData(&files);
    for (const rocksdb::LiveFileMetaData& f : files) {
      rocksdb::ColumnFamilyHandle* cf = f.column_family_name == kChunkCf ? h_.chunk : f.column_family_name == kHeadCf ? h_.head : h_.meta;
      rocksdb::SstFileReader reader(h_.db->GetOptions(cf));
      rocksdb::Status s = reader.Open(f.db_path + f.name);
      if (s.ok()) s = reader.VerifyChecksum();
      if (s.ok()) continue;
      const std::string name = f.name.substr(f.name.find_first_not_of('/'));
      problem("file " + name + " (" + f.column_family_name + ", level " + std::to_string(f.level) + "): " + s.ToString());
      damaged_files_.push_back({f.column_family_name, name, f.smallestkey, f.largestkey});
    }
  }

  // Whether `column` is one the table stores: a schema column past the key columns, or a
  // layout column (_steps; _rows for nested tables).
  static bool storedColumn(Table t, uint8_t column) {
    if (column == kStepsColumnId) return true;
    if (column == kRowCountColumnId) return isNestedTable(t);
    return findColumn(t, column) != nullptr && column >= kFirstStoredColumnId;
  }

  // One pass over the chunk keys: each value's checksum and header, and the sets they form.
  Status listChunks() {
    return forEach(kChunkCf, h_.chunk, [&](std::string_view key, std::string_view value) {
      ++counts_.chunks;
      counts_.chunk_bytes += key.size() + value.size();
      ChunkKey k;
      if (!decodeChunkKey(key, &k)) {
        problem(describeKey(kChunkCf, key) + ": not a chunk key");
        return;
      }
      if (!knownJob(k.job, "chunk")) return;
      const SetKey set{k.job, k.table, k.step_base, k.rank, k.attempt};
      sets_.insert(set);
      if (!storedColumn(k.table, k.column) || k.step_base % h_.block_steps != 0) {
        problem(describeKey(kChunkCf, key) + ": no such column in table " + tableName(k.table) + ", or not a block's first step");
        damaged_.insert(set);
        return;
      }
      ChunkView view;
      if (Status s = ChunkReader::verify(key, value, &view); !s.isOk()) {
        problem(s.toString());
        damaged_.insert(set);
      }
    });
  }

  // The whole set decoded (every stored column), and every chunk's header against the
  // decoded steps. The headers are taken from the chunks readBlock fetches.
  Status verifySet(const SetKey& set) {
    const auto& [job, table, base, rank, attempt] = set;
    const ChunkKey at{job, table, kStepsColumnId, base, rank, attempt};
    std::vector<Header> headers;
    std::string layout_value;  // the _steps chunk, whose payload checkSteps decodes again
    rocksdb::ReadOptions ro;
    ro.fill_cache = false;
    // listChunks verified every value; only its header is parsed here.
    ChunkGetter get = [&](const std::string& key, std::string* buffer, std::string_view* value) {
      rocksdb::Status s = h_.db->Get(ro, h_.chunk, key, buffer);
      if (s.IsNotFound()) return Status::notFound(describeKey(kChunkCf, key));
      ARGUS_RETURN_IF_ERROR(fromRocks(s, "reading " + describeKey(kChunkCf, key)));
      *value = *buffer;
      ChunkKey k;
      ChunkView view;
      if (decodeChunkKey(key, &k) && parseChunk(*buffer, &view).isOk()) {
        if (k.column == kStepsColumnId) layout_value = *buffer;
        headers.push_back(Header{key, k.column, view.stats});
      }
      return Status::ok();
    };
    TableBlock block;
    uint64_t read = 0;
    Status s = ChunkReader::readBlock(at, nullptr, get, &block, &read);
    if (s.isNotFound()) {
      // Only the steps table answers NotFound, for a set without _steps: its other chunks
      // exist (the listing saw them), so a block lost its layout.
      problem(describeKey(kChunkCf, encodeChunkKey(at)) + ": missing, while other chunks of its set exist");
      return Status::ok();
    }
    if (!s.isOk()) {
      if (s.code() == Status::Code::kIoError) return s;
      problem(s.toString());
      return Status::ok();
    }
    checkSteps(at, block, headers, layout_value);
    return Status::ok();
  }

  void checkSteps(const ChunkKey& at, const TableBlock& block, const std::vector<Header>& headers, std::string_view layout_value) {
    const std::vector<int64_t>& steps = block.steps;
    const std::string layout_key = describeKey(kChunkCf, encodeChunkKey(at));
    if (steps.empty()) {
      problem(layout_key + ": a block of no steps");
      return;
    }
    const uint64_t first = static_cast<uint64_t>(steps.front()), last = static_cast<uint64_t>(steps.back());
    if (last - at.step_base >= h_.block_steps) {
      problem(layout_key + ": step " + std::to_string(last) + " past its block of " + std::to_string(h_.block_steps) + " steps");
    }
    for (const Header& h : headers) {
      const ChunkStats& st = h.stats;
      if (h.column == kStepsColumnId) checkLayoutPayload(h.key, layout_value, steps);
      const bool rows_differ = !isNestedTable(at.table) && st.rows != steps.size();
      if (st.first_step != first || st.last_step != last || rows_differ) {
        problem(describeKey(kChunkCf, h.key) + ": header says steps " + std::to_string(st.first_step) + ".." + std::to_string(st.last_step) +
                " in " + std::to_string(st.rows) + " rows; the block's _steps hold " + std::to_string(steps.size()) + " steps " +
                std::to_string(first) + ".." + std::to_string(last));
      }
    }
  }

  // readBlock takes a gapless _steps from its header alone; here its payload must say the same.
  void checkLayoutPayload(const std::string& key, std::string_view value, const std::vector<int64_t>& steps) {
    Column c;
    c.type = ColumnType::kUInt64;
    ChunkView view;
    Status s = parseChunk(value, &view);
    if (s.isOk()) s = ChunkReader::decodeVerified(key, view, ColumnType::kUInt64, SIZE_MAX, nullptr, &c);
    if (!s.isOk()) {
      problem(s.toString());
    } else if (c.ints != steps) {
      problem(describeKey(kChunkCf, key) + ": its payload's steps differ from its header's");
    }
  }

  const RocksStore& store_;
  const DbHandles& h_;
  const std::function<void(const std::string&)>& on_problem_;
  VerifyCounts counts_;
  std::map<uint32_t, std::string> jobs_;
  std::set<uint32_t> unnamed_jobs_;
  std::set<SetKey> sets_, damaged_;
  bool files_checked_ = false;
  std::vector<DamagedFile> damaged_files_;
};

}  // namespace

Result<VerifyCounts> verifyStore(const RocksStore& store, const std::function<void(const std::string&)>& on_problem) {
  return Verifier(store, on_problem).run();
}

}  // namespace argus::storage
