// The Store on RocksDB: open and format checks, jobs, the write path (group commit),
// sealing, scans, drops and retention. Formats: docs/format/.
#include "storage/rocks_store.h"

#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <xxhash.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "model/step_chain.h"
#include "storage/head_entry.h"
#include "storage/keys.h"
#include "storage/meta_records.h"
#include "storage/parallel_scan_cursor.h"
#include "storage/scan_cursor.h"
#include "storage/scan_parts.h"

namespace argus::storage {

Status fromRocks(const rocksdb::Status& s, std::string_view context) {
  if (s.ok()) return Status::ok();
  std::string m = std::string(context) + ": " + s.ToString();
  if (s.IsNotFound()) return Status::notFound(m);
  if (s.IsCorruption()) return Status::corruption(m);
  if (s.IsInvalidArgument()) return Status::invalidArgument(m);
  if (s.IsNotSupported()) return Status::invalidArgument(m);
  if (s.IsIOError()) return Status::ioError(m);
  if (s.IsBusy() || s.IsTryAgain() || s.IsTimedOut()) return Status::unavailable(m);
  if (s.IsAborted()) return Status::aborted(m);
  return Status::ioError(m);
}

namespace {

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

rocksdb::CompressionType headCompression() {
  for (auto c : rocksdb::GetSupportedCompressions()) {
    if (c == rocksdb::kLZ4Compression) return c;
  }
  return rocksdb::kSnappyCompression;
}

rocksdb::ColumnFamilyOptions cfOptions(std::string_view name, const std::shared_ptr<rocksdb::Cache>& cache) {
  rocksdb::ColumnFamilyOptions o;
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = cache;
  if (name == kHeadCf) {
    // The ingest path: big memtables absorb group commits; rows are deleted on seal, so
    // most never reach an SST.
    o.write_buffer_size = 128 << 20;
    o.max_write_buffer_number = 4;
    o.compression = headCompression();
    // A scan walks a rank's entries in key order, an entry (a record or a batch, a few KB)
    // at a time: with the 4 KB default nearly every step of the walk loaded a block.
    t.block_size = 64 << 10;
  } else if (name == kChunkCf) {
    // Chunks are already compressed by their codecs (docs/format/codecs.md).
    o.compression = rocksdb::kNoCompression;
    o.write_buffer_size = 64 << 20;
    t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    t.block_size = 16 << 10;
  } else {
    o.compression = rocksdb::kNoCompression;
  }
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  return o;
}

uint64_t valueHash(std::string_view v) { return XXH3_64bits(v.data(), v.size()); }

}  // namespace

Result<std::unique_ptr<Store>> Store::open(const std::string& dir, const StoreOptions& options) {
  auto r = RocksStore::openRocks(dir, options);
  if (!r.isOk()) return r.status();
  return std::unique_ptr<Store>(std::move(r).value());
}

Result<std::unique_ptr<RocksStore>> RocksStore::openReadOnly(const std::string& dir) {
  StoreOptions options;
  options.read_only = true;
  options.create_if_missing = false;
  return openRocks(dir, options);
}

Result<std::unique_ptr<RocksStore>> RocksStore::openRocks(const std::string& dir, const StoreOptions& options) {
  std::unique_ptr<RocksStore> s(new RocksStore());
  Status st = s->openImpl(dir, options);
  if (!st.isOk()) return st.withContext("opening store at " + dir);
  return s;
}

RocksStore::~RocksStore() {
  if (db_) {
    if (!options_.read_only) {
      // Memtables to SSTs: RocksDB closes without (the WAL has it all), and every later open,
      // each `argus query --data` included, replayed up to max_total_wal_size of WAL (1.5 s
      // for the 10,240-rank bench store). A failure only leaves that replay.
      rocksdb::FlushOptions fo;
      db_->Flush(fo, handles_);
    }
    for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
    db_->Close();
  }
}

Status RocksStore::openImpl(const std::string& dir, const StoreOptions& options) {
  dir_ = dir;
  options_ = options;
  if (options.block_steps == 0 || (options.block_steps & (options.block_steps - 1)) != 0) {
    return Status::invalidArgument("block_steps " + std::to_string(options.block_steps) + " is not a power of two");
  }
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec)) {
    return Status::invalidArgument(dir + " exists and is not a directory");
  }
  bool exists = std::filesystem::exists(std::filesystem::path(dir) / "CURRENT", ec);
  if (!exists && (options.read_only || !options.create_if_missing)) return Status::notFound("no store at " + dir);

  rocksdb::DBOptions dbo;
  dbo.create_if_missing = options.create_if_missing;
  dbo.create_missing_column_families = true;
  dbo.max_background_jobs = 2;
  dbo.max_total_wal_size = 512 << 20;
  dbo.keep_log_file_num = 4;
  dbo.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;

  std::vector<std::string> names{rocksdb::kDefaultColumnFamilyName, kMetaCf, kHeadCf, kChunkCf};
  if (exists) {
    std::vector<std::string> found;
    ARGUS_RETURN_IF_ERROR(fromRocks(rocksdb::DB::ListColumnFamilies(dbo, dir, &found), "listing column families"));
    for (const auto& n : found) {
      if (std::find(names.begin(), names.end(), n) == names.end()) {
        return Status::corruption("unexpected column family '" + n + "': not an Argus store");
      }
    }
    if (options.read_only && found.size() != names.size()) return Status::corruption("column families missing: not an Argus store");
  }
  std::vector<rocksdb::ColumnFamilyDescriptor> cfds;
  std::shared_ptr<rocksdb::Cache> cache = rocksdb::NewLRUCache(options.block_cache_bytes);
  for (const auto& n : names) cfds.emplace_back(n, cfOptions(n, cache));
  rocksdb::DB* raw = nullptr;
  rocksdb::Status rs = options.read_only ? rocksdb::DB::OpenForReadOnly(dbo, dir, cfds, &handles_, &raw)
                                         : rocksdb::DB::Open(dbo, dir, cfds, &handles_, &raw);
  ARGUS_RETURN_IF_ERROR(fromRocks(rs, "opening RocksDB"));
  db_.reset(raw);
  h_.db = raw;
  h_.meta = handles_[1];
  h_.head = handles_[2];
  h_.chunk = handles_[3];
  h_.head_index = &head_index_;
  ARGUS_RETURN_IF_ERROR(checkFormat());
  if (!options.read_only) ARGUS_RETURN_IF_ERROR(beginSessionEpoch());
  ARGUS_RETURN_IF_ERROR(loadHead());
  return loadJobs();
}

Status RocksStore::loadHead() {
  uint64_t malformed = 0;
  std::string first_malformed;
  HeadKey k;
  auto bytes = headBytesUnder("", [&](std::string_view key) {
    if (decodeHeadKey(key, &k)) {
      head_index_.add(k.job, k.rank, k.block_base);
    } else if (malformed++ == 0) {
      first_malformed = describeKey(kHeadCf, key);
    }
  });
  if (!bytes.isOk()) return bytes.status();
  if (malformed > 0) {
    // Not a block of any job: no scan or seal can reach it. Said once, the store still opens.
    std::fprintf(stderr, "argus store %s: ignoring %llu malformed head keys (first: %s)\n", dir_.c_str(),
                 static_cast<unsigned long long>(malformed), first_malformed.c_str());
  }
  head_bytes_ = *bytes;
  return Status::ok();
}

Result<uint64_t> RocksStore::headBytesUnder(const std::string& prefix, const std::function<void(std::string_view key)>& on_key) const {
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, h_.head));
  uint64_t bytes = 0;
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    bytes += it->key().size() + it->value().size();
    if (on_key) on_key(std::string_view(it->key().data(), it->key().size()));
  }
  ARGUS_RETURN_IF_ERROR(fromRocks(it->status(), "reading head entries"));
  return bytes;
}

Status RocksStore::beginSessionEpoch() {
  std::string v;
  uint32_t epoch = 0;
  rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), h_.meta, metaKey(MetaTag::kSessionEpoch), &v);
  if (!rs.IsNotFound()) {
    ARGUS_RETURN_IF_ERROR(fromRocks(rs, "reading session epoch"));
    ARGUS_RETURN_IF_ERROR(decodeU32(v, &epoch).withContext("session epoch"));
  }
  if (epoch == UINT32_MAX) return Status::resourceExhausted("session epochs exhausted (2^32 opens of this store)");
  ++epoch;
  rocksdb::WriteOptions wo;
  wo.sync = true;  // an id handed out after a crash must not repeat one from before it
  ARGUS_RETURN_IF_ERROR(fromRocks(db_->Put(wo, h_.meta, metaKey(MetaTag::kSessionEpoch), encodeU32(epoch)), "writing session epoch"));
  next_session_id_ = static_cast<uint64_t>(epoch) << 32;
  return Status::ok();
}

uint64_t RocksStore::newSessionId() {
  // 2^32 sessions per open; past that the ids run into the next epoch's, which a reopen
  // never hands out again only while opens stay below it. Far beyond any real use.
  return ++next_session_id_;
}

Status RocksStore::checkFormat() {
  std::string v;
  rocksdb::ReadOptions ro;
  rocksdb::Status rs = db_->Get(ro, h_.meta, metaKey(MetaTag::kFormatVersion), &v);
  if (rs.IsNotFound()) {
    // A store without a version is either brand new (empty) or damaged.
    for (auto* h : handles_) {
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, h));
      it->SeekToFirst();
      if (it->Valid()) {
        return Status::corruption("format version missing in a non-empty store (column family '" + h->GetName() + "' has data)");
      }
    }
    if (options_.read_only) return Status::notFound("empty store (no format version)");
    rocksdb::WriteBatch b;
    b.Put(h_.meta, metaKey(MetaTag::kFormatVersion), encodeU32(kFormatVersion));
    b.Put(h_.meta, metaKey(MetaTag::kBlockSteps), encodeU32(options_.block_steps));
    b.Put(h_.meta, metaKey(MetaTag::kNextJobId), encodeU32(1));
    rocksdb::WriteOptions wo;
    wo.sync = true;
    ARGUS_RETURN_IF_ERROR(fromRocks(db_->Write(wo, &b), "writing format version"));
    h_.block_steps = options_.block_steps;
    return Status::ok();
  }
  ARGUS_RETURN_IF_ERROR(fromRocks(rs, "reading format version"));
  uint32_t version = 0;
  ARGUS_RETURN_IF_ERROR(decodeU32(v, &version).withContext("format version"));
  if (version != kFormatVersion) {
    return Status::versionMismatch("store format version " + std::to_string(version) + (version > kFormatVersion ? " is newer than" : " is not") +
                                   " the version this build reads (" + std::to_string(kFormatVersion) + ")");
  }
  rs = db_->Get(ro, h_.meta, metaKey(MetaTag::kBlockSteps), &v);
  ARGUS_RETURN_IF_ERROR(fromRocks(rs, "reading block_steps"));
  uint32_t bs = 0;
  ARGUS_RETURN_IF_ERROR(decodeU32(v, &bs).withContext("block_steps"));
  if (bs == 0 || (bs & (bs - 1)) != 0) return Status::corruption("stored block_steps " + std::to_string(bs) + " is not a power of two");
  // The stored block size wins: chunks already on disk are cut by it.
  h_.block_steps = bs;
  return Status::ok();
}

Status RocksStore::loadJobs() {
  rocksdb::ReadOptions ro;
  std::string v;
  rocksdb::Status rs = db_->Get(ro, h_.meta, metaKey(MetaTag::kNextJobId), &v);
  ARGUS_RETURN_IF_ERROR(fromRocks(rs, "reading next_job_id"));
  ARGUS_RETURN_IF_ERROR(decodeU32(v, &next_job_id_).withContext("next_job_id"));
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, h_.meta));
  std::string prefix = metaKey(MetaTag::kJobByName);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    JobInfo info;
    Status s = decodeJobInfo(std::string_view(it->value().data(), it->value().size()), &info);
    if (!s.isOk()) return s.withContext(describeKey(kMetaCf, std::string_view(it->key().data(), it->key().size())));
    job_names_[info.id] = info.name;
    jobs_[info.name] = std::move(info);
  }
  return fromRocks(it->status(), "loading jobs");
}

// --- jobs ---

Result<JobId> RocksStore::ensureJob(std::string_view job) {
  {
    std::lock_guard lock(jobs_mu_);
    auto it = jobs_.find(job);
    if (it != jobs_.end()) return it->second.id;
  }
  if (!model::isValidJobId(job)) return Status::invalidArgument("invalid job id '" + std::string(job) + "' (1-128 bytes of [A-Za-z0-9._-])");
  if (options_.read_only) return Status::permissionDenied("store opened read-only");
  std::shared_lock drop(drop_mu_);
  std::lock_guard lock(jobs_mu_);
  auto it = jobs_.find(job);
  if (it != jobs_.end()) return it->second.id;
  JobInfo info;
  info.id = next_job_id_;
  info.name = std::string(job);
  info.created_ns = nowNs();
  info.last_write_ns = info.created_ns;
  rocksdb::WriteBatch b;
  b.Put(h_.meta, jobByNameKey(job), encodeJobInfo(info));
  b.Put(h_.meta, metaKey(MetaTag::kNextJobId), encodeU32(next_job_id_ + 1));
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync_wal;
  // Held under jobs_mu_: job creation is rare and must not hand out an id twice.
  ARGUS_RETURN_IF_ERROR(fromRocks(db_->Write(wo, &b), "creating job"));
  ++next_job_id_;
  job_names_[info.id] = info.name;
  jobs_[info.name] = info;
  return info.id;
}

Result<JobInfo> RocksStore::findJob(std::string_view job) const {
  std::lock_guard lock(jobs_mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return Status::notFound("no job '" + std::string(job) + "'");
  return it->second;
}

std::vector<JobInfo> RocksStore::listJobs() const {
  std::lock_guard lock(jobs_mu_);
  std::vector<JobInfo> out;
  for (const auto& [name, info] : jobs_) out.push_back(info);
  return out;
}

Status RocksStore::setRetention(std::string_view job, int64_t retention_ns) {
  if (options_.read_only) return Status::permissionDenied("store opened read-only");
  if (retention_ns < 0) return Status::invalidArgument("negative retention");
  std::shared_lock drop(drop_mu_);
  // No write is in flight while this JobInfo is put, and every later write builds its
  // JobInfo from the updated map: a write cannot put back the old retention (M2).
  auto gate = gate_.exclusive();
  std::lock_guard lock(jobs_mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return Status::notFound("no job '" + std::string(job) + "'");
  JobInfo info = it->second;
  info.retention_ns = retention_ns;
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync_wal;
  ARGUS_RETURN_IF_ERROR(fromRocks(db_->Put(wo, h_.meta, jobByNameKey(job), encodeJobInfo(info)), "setting retention"));
  it->second = info;
  return Status::ok();
}

// --- writes ---

Status RocksStore::write(const WriteRequest& request) { return writeGroup(std::span<const WriteRequest>(&request, 1)); }

Status RocksStore::writeGroup(std::span<const WriteRequest> requests) {
  if (options_.read_only) return Status::permissionDenied("store opened read-only");
  std::shared_lock drop(drop_mu_);
  return writeBatchFor(requests);
}

Status RocksStore::writeBatchFor(std::span<const WriteRequest> requests) {
  size_t records = 0;
  for (const WriteRequest& r : requests) {
    records += r.records.size();
    // Chunks store steps as int64 (docs/format/chunk.md, "Limits"): refuse what could be
    // written to head but never read back once sealed.
    for (const model::StepRecord& rec : r.records) {
      if (rec.step > static_cast<uint64_t>(INT64_MAX)) {
        return Status::invalidArgument("step " + std::to_string(rec.step) + " (rank " + std::to_string(rec.rank) + ", job id " + std::to_string(r.job) +
                                       ") exceeds the largest storable step " + std::to_string(INT64_MAX));
      }
    }
    for (const EncodedEntry& e : r.entries) {
      // Every step of a block at or below INT64_MAX is too (block_steps is a power of two).
      if (e.block_base > static_cast<uint64_t>(INT64_MAX) || e.block_base % h_.block_steps != 0 || e.value.empty()) {
        return Status::invalidArgument("head entry of rank " + std::to_string(e.rank) + " with block_base " + std::to_string(e.block_base) +
                                       " (job id " + std::to_string(r.job) + "): not a block of " + std::to_string(h_.block_steps) +
                                       " steps at or below " + std::to_string(INT64_MAX) + ", or empty");
      }
    }
  }
  // Shared: writers commit concurrently; the sealer's validate-and-commit and setRetention
  // wait for this batch to be applied (on disk and in jobs_) before they go on.
  auto gate = gate_.shared();
  // One batch per writing thread, reused: its buffer keeps its capacity (and its pages:
  // a fresh multi-MB buffer per commit costs page faults), reserved for ~1-2 KB head values.
  thread_local rocksdb::WriteBatch batch;
  batch.Clear();
  struct ShrinkAfter {
    rocksdb::WriteBatch& b;
    ~ShrinkAfter() {
      if (b.GetDataSize() > (32u << 20)) b = rocksdb::WriteBatch();  // an outsized group: give it back
      b.Clear();
    }
  } shrink_after{batch};

  int64_t now = nowNs();
  // Jobs touched, with the JobInfo to store (last_write_ns = now).
  std::vector<JobInfo> touched;
  {
    std::lock_guard lock(jobs_mu_);
    for (const WriteRequest& r : requests) {
      bool seen = false;
      for (const auto& j : touched) seen = seen || j.id == r.job;
      if (seen) continue;
      auto n = job_names_.find(r.job);
      if (n == job_names_.end()) return Status::invalidArgument("write to unknown job id " + std::to_string(r.job));
      JobInfo info = jobs_.find(n->second)->second;
      info.last_write_ns = std::max(info.last_write_ns, now);
      touched.push_back(std::move(info));
    }
  }

  uint64_t head_added = 0;
  std::vector<HeadIndex::Entry> head_entries;  // listed in the head index before the commit (head_index.h)
  // Dictionary and topology entries: only new or changed ones go into the batch.
  std::vector<std::pair<std::string, uint64_t>> meta_new;
  auto putMeta = [&](std::string key, std::string value) {
    uint64_t h = valueHash(value);
    {
      std::lock_guard lock(cache_mu_);
      auto it = meta_cache_.find(key);
      if (it != meta_cache_.end() && it->second == h) return;
    }
    batch.Put(h_.meta, key, value);
    meta_new.emplace_back(std::move(key), h);
  };

  for (const WriteRequest& r : requests) {
    if (r.topology) putMeta(jobDataKey(r.job, JobDataKind::kTopology, r.topology->rank), encodeTopology(*r.topology));
    for (const auto& e : r.kernels) putMeta(jobDataKey(r.job, JobDataKind::kKernelDict, e.signature), encodeKernelDict(e));
    for (const auto& e : r.stacks) putMeta(jobDataKey(r.job, JobDataKind::kStackDict, e.stack_id), encodeStackDict(e));
    for (const auto& e : r.strings) putMeta(jobDataKey(r.job, JobDataKind::kStringDict, e.id), encodeStringDict(e));
    if (!r.records.empty()) head_added += putRecordEntries(r.job, r.records, &batch, &head_entries);
    for (const EncodedEntry& e : r.entries) {
      head_added += kHeadKeySize + e.value.size();
      char key[kHeadKeySize];
      const HeadKey k{r.job, e.rank, e.block_base, e.session, e.first_seq};
      encodeHeadKeyTo(k, key);
      head_entries.push_back(headIndexEntry(k, e.value));
      batch.Put(h_.head, rocksdb::Slice(key, sizeof key), rocksdb::Slice(e.value.data(), e.value.size()));
    }
  }
  for (const JobInfo& info : touched) batch.Put(h_.meta, jobByNameKey(info.name), encodeJobInfo(info));
  head_index_.add(head_entries);

  rocksdb::WriteOptions wo;
  wo.sync = options_.sync_wal;
  ARGUS_RETURN_IF_ERROR(fromRocks(db_->Write(wo, &batch), "writing " + std::to_string(records) + " records and " +
                                                               std::to_string(requests.size()) + " requests"));
  head_bytes_.fetch_add(head_added, std::memory_order_relaxed);

  {
    std::lock_guard lock(jobs_mu_);
    for (const JobInfo& info : touched) {
      auto it = jobs_.find(info.name);
      if (it != jobs_.end()) it->second.last_write_ns = std::max(it->second.last_write_ns, info.last_write_ns);
    }
  }
  if (!meta_new.empty()) {
    std::lock_guard lock(cache_mu_);
    // Bounded: past a million entries start over (a re-put is harmless, just bytes).
    if (meta_cache_.size() > (1u << 20)) meta_cache_.clear();
    for (auto& [k, h] : meta_new) meta_cache_[std::move(k)] = h;
  }
  return Status::ok();
}

uint64_t RocksStore::putRecordEntries(JobId job, std::span<const model::StepRecord> records, rocksdb::WriteBatch* batch,
                                      std::vector<HeadIndex::Entry>* head_entries) {
  // The records as one session of their own: a run of one rank and block is one entry,
  // its chain starting with a keyframe.
  thread_local model::ChainedStepEncoder encoder;
  thread_local std::string value, encoded;
  encoder.setBlockSteps(h_.block_steps);
  uint64_t session = newSessionId();
  uint64_t bytes = 0;
  size_t i = 0;
  while (i < records.size()) {
    const uint32_t rank = records[i].rank;
    const uint64_t base = h_.blockBase(records[i].step);
    HeadKey key{job, rank, base, session, i + 1};
    value.clear();
    beginHeadEntry(&value);
    encoder.reset();
    for (; i < records.size() && records[i].rank == rank && h_.blockBase(records[i].step) == base; ++i) {
      encoded.clear();
      encoder.encode(records[i], &encoded);
      appendHeadRecord(&value, encoded, records[i]);
    }
    char k[kHeadKeySize];
    encodeHeadKeyTo(key, k);
    head_entries->push_back(headIndexEntry(key, value));
    batch->Put(h_.head, rocksdb::Slice(k, sizeof k), value);
    bytes += sizeof k + value.size();
  }
  return bytes;
}

// --- sealing ---

Status RocksStore::seal(bool all) {
  if (options_.read_only) return Status::permissionDenied("store opened read-only");
  std::shared_lock drop(drop_mu_);
  std::lock_guard lock(seal_mu_);
  SealStats stats;
  if (!sealer_) sealer_ = std::make_unique<Sealer>(h_);
  Status s = sealer_->run(all, &stats);
  head_bytes_.fetch_sub(stats.head_bytes, std::memory_order_relaxed);
  last_seal_ = stats;
  return s;
}

Status RocksStore::sealReady() { return seal(false); }
Status RocksStore::sealAll() { return seal(true); }

void RocksStore::setSealerTestHooks(SealerTestHooks hooks) {
  std::lock_guard lock(seal_mu_);
  if (!sealer_) sealer_ = std::make_unique<Sealer>(h_);
  sealer_->setTestHooks(std::move(hooks));
}

SealStats RocksStore::lastSealStats() const {
  std::lock_guard lock(seal_mu_);
  return last_seal_;
}

// --- reads ---

Result<std::unique_ptr<RocksScanCursor>> RocksStore::planScan(const ScanSpec& spec, size_t threads) const {
  std::vector<const ColumnDef*> cols;
  if (spec.columns.empty()) {
    for (const ColumnDef& c : tableColumns(spec.table)) cols.push_back(&c);
  } else {
    for (const std::string& name : spec.columns) {
      const ColumnDef* c = findColumn(spec.table, name);
      if (c == nullptr) return Status::invalidArgument("no column '" + name + "' in table " + tableName(spec.table));
      cols.push_back(c);
    }
  }
  auto job = findJob(spec.job);
  if (!job.isOk()) return job.status();
  auto cursor = std::make_unique<RocksScanCursor>(h_, job->id, spec, std::move(cols));
  ARGUS_RETURN_IF_ERROR(cursor->init(threads));
  return cursor;
}

Result<std::unique_ptr<ScanCursor>> RocksStore::scan(const ScanSpec& spec) const {
  auto cursor = planScan(spec, spec.threads);
  if (!cursor.isOk()) return cursor.status();
  if (spec.threads < 2 || cursor.value()->rankCount() < 2) return std::unique_ptr<ScanCursor>(std::move(cursor).value());
  return std::unique_ptr<ScanCursor>(std::make_unique<ParallelScanCursor>(std::make_unique<RocksScanParts>(std::move(cursor).value(), spec.threads)));
}

Result<std::unique_ptr<ScanParts>> RocksStore::scanParts(const ScanSpec& spec, size_t parts) const {
  auto cursor = planScan(spec, parts);
  if (!cursor.isOk()) return cursor.status();
  return std::unique_ptr<ScanParts>(std::make_unique<RocksScanParts>(std::move(cursor).value(), parts, spec.contiguous_parts));
}

Result<std::optional<uint64_t>> RocksStore::lastBlockBase(JobId id) const {
  std::optional<uint64_t> last;
  auto view = [](const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); };
  // Sealed: the last steps-layout chunk key of the job (keys order by step_base before rank).
  std::string chunks = chunkPrefix(id, Table::kSteps, kStepsColumnId);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), h_.chunk));
  std::string end = prefixSuccessor(chunks);
  if (end.empty()) {
    it->SeekToLast();
  } else {
    it->SeekForPrev(end);
  }
  if (it->Valid() && it->key().starts_with(chunks)) {
    ChunkKey k;
    if (!decodeChunkKey(view(it->key()), &k)) return Status::corruption("malformed chunk key " + describeKey(kChunkCf, view(it->key())));
    last = k.step_base;
  }
  ARGUS_RETURN_IF_ERROR(fromRocks(it->status(), "last step: listing chunks"));
  // Head: the index lists every live entry's block (head_index.h), without walking the
  // tombstones sealing leaves.
  std::optional<uint64_t> head = head_index_.lastBlock(id);
  if (head && (!last || *head > *last)) last = head;
  return last;
}

std::optional<uint64_t> RocksStore::headStepIn(JobId id, uint64_t block_base) const {
  const std::vector<uint32_t> ranks = head_index_.ranks(id, block_base, block_base + h_.block_steps, h_.block_steps);
  if (ranks.empty()) return std::nullopt;
  // The last entry of one rank with live entries in the block: seeking back from the end of
  // its prefix lands on it, with no sealed rank's tombstones to walk.
  const std::string prefix = headPrefix(id, ranks.back(), block_base);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), h_.head));
  it->SeekForPrev(prefixSuccessor(prefix));
  if (!it->Valid() || !it->key().starts_with(prefix)) return std::nullopt;
  HeadEntryReader reader(std::string_view(it->value().data(), it->value().size()));
  if (!reader.begin().isOk()) return std::nullopt;
  std::optional<uint64_t> step;
  HeadEntryReader::Record rec;
  while (!reader.atEnd() && reader.next(&rec).isOk()) step = rec.step;
  return step;
}

Result<std::optional<uint64_t>> RocksStore::lastStep(std::string_view job) const {
  auto info = findJob(job);
  if (!info.isOk()) return info.status();
  auto base = lastBlockBase(info->id);
  if (!base.isOk()) return base.status();
  if (!base->has_value()) return std::optional<uint64_t>();
  // The last block holds the job's last step: scan only its step column, from a step some
  // rank already has in it when its head entries say one (read from an entry's header, not
  // decoded), so a live block is decoded from its last chains only. Nothing found there
  // (the step's record was never acknowledged): the whole block. The head index may list a
  // block whose first entry is still being committed; then the last step is in an earlier
  // block, and the rest of the job is scanned.
  auto maxStep = [&](uint64_t from, uint64_t to) -> Result<std::optional<uint64_t>> {
    ScanSpec spec;
    spec.job = std::string(job);
    spec.columns = {"step"};
    spec.from_step = from;
    spec.to_step = to;
    auto cursor = scan(spec);
    if (!cursor.isOk()) return cursor.status();
    std::optional<uint64_t> last;
    ColumnBatch batch;
    for (bool has_rows = true;;) {
      ARGUS_RETURN_IF_ERROR((*cursor)->next(&batch, &has_rows));
      if (!has_rows) return last;
      for (int64_t step : batch.columns[0].ints) last = std::max(last.value_or(0), static_cast<uint64_t>(step));
    }
  };
  if (std::optional<uint64_t> seen = headStepIn(info->id, **base); seen && *seen > **base) {
    auto last = maxStep(*seen, UINT64_MAX);
    if (!last.isOk() || last->has_value()) return last;
  }
  auto last = maxStep(**base, UINT64_MAX);
  if (!last.isOk() || last->has_value() || **base == 0) return last;
  return maxStep(0, **base);
}

Status RocksStore::forEachJobData(std::string_view job, JobDataKind kind,
                                  const std::function<Status(uint64_t id, std::string_view key, std::string_view value)>& fn) const {
  auto info = findJob(job);
  if (!info.isOk()) return info.status();
  std::string prefix = jobDataPrefix(info->id);
  prefix.push_back(static_cast<char>(kind));
  const size_t id_bytes = kind == JobDataKind::kTopology ? 4 : 8;  // as jobDataKey writes them
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), h_.meta));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    const std::string_view key(it->key().data(), it->key().size());
    if (key.size() != prefix.size() + id_bytes) return Status::corruption(describeKey(kMetaCf, key) + ": malformed job data key");
    uint64_t id = 0;
    for (size_t i = prefix.size(); i < key.size(); ++i) id = id << 8 | static_cast<uint8_t>(key[i]);
    ARGUS_RETURN_IF_ERROR(fn(id, key, std::string_view(it->value().data(), it->value().size())));
  }
  return fromRocks(it->status(), "reading job data");
}

Result<std::vector<model::RankTopology>> RocksStore::topology(std::string_view job) const {
  std::vector<model::RankTopology> out;
  ARGUS_RETURN_IF_ERROR(forEachJobData(job, JobDataKind::kTopology, [&](uint64_t, std::string_view key, std::string_view value) {
    model::RankTopology t;
    ARGUS_RETURN_IF_ERROR(decodeTopology(value, &t).withContext(describeKey(kMetaCf, key)));
    out.push_back(std::move(t));
    return Status::ok();
  }));
  return out;
}

Result<model::KernelDictEntry> RocksStore::kernelName(std::string_view job, uint64_t signature) const {
  auto info = findJob(job);
  if (!info.isOk()) return info.status();
  std::string key = jobDataKey(info->id, JobDataKind::kKernelDict, signature);
  std::string v;
  rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), h_.meta, key, &v);
  if (rs.IsNotFound()) return Status::notFound("no kernel name for " + describeKey(kMetaCf, key));
  ARGUS_RETURN_IF_ERROR(fromRocks(rs, "reading kernel dictionary"));
  model::KernelDictEntry e;
  ARGUS_RETURN_IF_ERROR(decodeKernelDict(v, &e).withContext(describeKey(kMetaCf, key)));
  e.signature = signature;
  return e;
}

template <typename Entry, typename Decode, typename SetId>
Result<std::vector<Entry>> RocksStore::dictionary(std::string_view job, JobDataKind kind, Decode decode, SetId set_id) const {
  std::vector<Entry> out;
  ARGUS_RETURN_IF_ERROR(forEachJobData(job, kind, [&](uint64_t id, std::string_view key, std::string_view value) {
    Entry e;
    ARGUS_RETURN_IF_ERROR(decode(value, &e).withContext(describeKey(kMetaCf, key)));
    set_id(e, id);
    out.push_back(std::move(e));
    return Status::ok();
  }));
  return out;
}

Result<std::vector<model::KernelDictEntry>> RocksStore::kernelNames(std::string_view job) const {
  return dictionary<model::KernelDictEntry>(job, JobDataKind::kKernelDict, decodeKernelDict,
                                            [](model::KernelDictEntry& e, uint64_t id) { e.signature = id; });
}

Result<std::vector<model::StackDictEntry>> RocksStore::stackNames(std::string_view job) const {
  return dictionary<model::StackDictEntry>(job, JobDataKind::kStackDict, decodeStackDict,
                                           [](model::StackDictEntry& e, uint64_t id) { e.stack_id = id; });
}

Result<std::vector<model::StringDictEntry>> RocksStore::names(std::string_view job) const {
  return dictionary<model::StringDictEntry>(job, JobDataKind::kStringDict, decodeStringDict,
                                            [](model::StringDictEntry& e, uint64_t id) { e.id = id; });
}

Status RocksStore::addFinding(std::string_view job, std::string_view value) {
  if (options_.read_only) return Status::permissionDenied("store opened read-only");
  std::shared_lock drop(drop_mu_);  // a drop after this put deletes it with the job's range
  uint32_t id = 0;
  {
    std::lock_guard lock(jobs_mu_);
    auto it = jobs_.find(job);
    if (it == jobs_.end()) return Status::notFound("no job '" + std::string(job) + "'");
    id = it->second.id;
  }
  // Keyed by the time it was recorded, one ns past the last when two come in the same ns.
  const auto now = static_cast<uint64_t>(nowNs());
  uint64_t last = last_finding_ns_.load(), at = 0;
  do {
    at = std::max(now, last + 1);
  } while (!last_finding_ns_.compare_exchange_weak(last, at));
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync_wal;
  return fromRocks(db_->Put(wo, h_.meta, jobDataKey(id, JobDataKind::kFinding, at), rocksdb::Slice(value.data(), value.size())), "recording a finding");
}

Result<std::vector<std::string>> RocksStore::findings(std::string_view job) const {
  std::vector<std::string> out;
  ARGUS_RETURN_IF_ERROR(forEachJobData(job, JobDataKind::kFinding, [&](uint64_t, std::string_view, std::string_view value) {
    out.emplace_back(value);
    return Status::ok();
  }));
  return out;
}

// --- drops and retention ---

Status RocksStore::dropJob(std::string_view job) {
  if (options_.read_only) return Status::permissionDenied("store opened read-only");
  std::unique_lock drop(drop_mu_);
  std::lock_guard seal(seal_mu_);
  JobInfo info;
  {
    std::lock_guard lock(jobs_mu_);
    auto it = jobs_.find(job);
    if (it == jobs_.end()) return Status::notFound("no job '" + std::string(job) + "'");
    info = it->second;
  }
  // No write is in flight (drop_mu_): what the job holds in head now is what the batch drops.
  auto head = headBytesUnder(headPrefix(info.id));
  if (!head.isOk()) return head.status();
  rocksdb::WriteBatch b;
  // Job-scoped ranges; the id is never reused, so the ranges stay dead.
  auto range = [&](rocksdb::ColumnFamilyHandle* cf, const std::string& prefix) {
    std::string end = prefixSuccessor(prefix);
    b.DeleteRange(cf, prefix, end);
  };
  range(h_.head, headPrefix(info.id));
  range(h_.chunk, chunkPrefix(info.id));
  range(h_.meta, jobDataPrefix(info.id));
  b.Delete(h_.meta, jobByNameKey(info.name));
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync_wal;
  ARGUS_RETURN_IF_ERROR(fromRocks(db_->Write(wo, &b), "dropping job " + info.name));
  head_bytes_.fetch_sub(*head, std::memory_order_relaxed);
  head_index_.dropJob(info.id);
  {
    std::lock_guard lock(jobs_mu_);
    jobs_.erase(info.name);
    job_names_.erase(info.id);
  }
  {
    std::lock_guard lock(cache_mu_);
    std::string prefix = jobDataPrefix(info.id);
    std::erase_if(meta_cache_, [&](const auto& kv) { return kv.first.starts_with(prefix); });
  }
  return Status::ok();
}

Status RocksStore::applyRetention(int64_t now_ns) {
  std::vector<std::string> expired;
  {
    std::lock_guard lock(jobs_mu_);
    for (const auto& [name, info] : jobs_) {
      if (info.retention_ns > 0 && info.last_write_ns < now_ns - info.retention_ns) expired.push_back(name);
    }
  }
  for (const auto& name : expired) {
    Status s = dropJob(name);
    if (!s.isOk() && !s.isNotFound()) return s;
  }
  return Status::ok();
}

Store::SizeInfo RocksStore::size() const {
  SizeInfo s;
  uint64_t v = 0;
  for (auto* h : {h_.meta, h_.head, h_.chunk}) {
    if (db_->GetIntProperty(h, "rocksdb.total-sst-files-size", &v)) s.live_bytes += v;
  }
  rocksdb::VectorLogPtr wal;
  if (db_->GetSortedWalFiles(wal).ok()) {
    for (const auto& f : wal) s.live_bytes += f->SizeFileBytes();
  }
  if (db_->GetIntProperty(h_.head, "rocksdb.estimate-num-keys", &v)) s.head_entries = v;
  if (db_->GetIntProperty(h_.chunk, "rocksdb.estimate-num-keys", &v)) s.chunks = v;
  return s;
}

Status RocksStore::compactAll() {
  if (options_.read_only) return Status::permissionDenied("store opened read-only");
  rocksdb::CompactRangeOptions co;
  co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  for (auto* h : {h_.meta, h_.head, h_.chunk}) {
    ARGUS_RETURN_IF_ERROR(fromRocks(db_->Flush(rocksdb::FlushOptions(), h), "flushing"));
    ARGUS_RETURN_IF_ERROR(fromRocks(db_->CompactRange(co, h, nullptr, nullptr), "compacting"));
  }
  return Status::ok();
}

rocksdb::ColumnFamilyHandle* RocksStore::cfByName(std::string_view cf) const {
  if (cf == kMetaCf) return h_.meta;
  if (cf == kHeadCf) return h_.head;
  if (cf == kChunkCf) return h_.chunk;
  return nullptr;
}

Status RocksStore::forEachRaw(std::string_view cf, const std::function<bool(std::string_view, std::string_view)>& fn) const {
  auto* h = cfByName(cf);
  if (h == nullptr) return Status::invalidArgument("no column family '" + std::string(cf) + "' (meta, head, chunk)");
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), h));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (!fn(std::string_view(it->key().data(), it->key().size()), std::string_view(it->value().data(), it->value().size()))) break;
  }
  return fromRocks(it->status(), "iterating " + std::string(cf));
}

}  // namespace argus::storage
