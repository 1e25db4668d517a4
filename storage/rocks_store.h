// RocksStore: the Store on RocksDB (docs/format/README.md). Store::open returns one.
// The extras below are additive to the Store interface: tools (`argus dump`), tests and
// benchmarks use them; the ingest and query paths need only Store.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <rocksdb/db.h>

#include "storage/db_handles.h"
#include "storage/sealer.h"
#include "storage/store.h"

namespace argus::storage {

class RocksScanCursor;

// The store format version (meta key format_version). Bump on any incompatible change
// to keys, chunks, codecs or meta records; an older build refuses a newer store.
// Version 2: head entries (records as they arrived) replaced head rows.
inline constexpr uint32_t kFormatVersion = 2;

class RocksStore final : public Store {
 public:
  static Result<std::unique_ptr<RocksStore>> openRocks(const std::string& dir, const StoreOptions& options);
  // An existing store, read-only (beside a live argusd): for tools that inspect a directory.
  static Result<std::unique_ptr<RocksStore>> openReadOnly(const std::string& dir);
  ~RocksStore() override;

  Result<JobId> ensureJob(std::string_view job) override;
  Result<JobInfo> findJob(std::string_view job) const override;
  std::vector<JobInfo> listJobs() const override;
  Status setRetention(std::string_view job, int64_t retention_ns) override;

  Status write(const WriteRequest& request) override;
  Status writeGroup(std::span<const WriteRequest> requests) override;
  uint64_t newSessionId() override;
  uint32_t blockSteps() const override { return h_.block_steps; }
  uint64_t headBytes() const override { return head_bytes_.load(std::memory_order_relaxed); }

  Status sealReady() override;
  Status sealAll() override;

  Result<std::unique_ptr<ScanCursor>> scan(const ScanSpec& spec) const override;
  Result<std::unique_ptr<ScanParts>> scanParts(const ScanSpec& spec, size_t parts) const override;
  Result<std::optional<uint64_t>> lastStep(std::string_view job) const override;

  Result<std::vector<model::RankTopology>> topology(std::string_view job) const override;
  Result<model::KernelDictEntry> kernelName(std::string_view job, uint64_t signature) const override;
  Result<std::vector<model::KernelDictEntry>> kernelNames(std::string_view job) const override;
  Result<std::vector<model::StackDictEntry>> stackNames(std::string_view job) const override;
  Result<std::vector<model::StringDictEntry>> names(std::string_view job) const override;
  Status addFinding(std::string_view job, std::string_view value) override;
  Result<std::vector<std::string>> findings(std::string_view job) const override;

  Status dropJob(std::string_view job) override;
  Status applyRetention(int64_t now_ns) override;
  SizeInfo size() const override;

  // --- extras ---
  // Flushes memtables and compacts every column family (on-disk size measurements).
  Status compactAll();
  // What the last seal did.
  SealStats lastSealStats() const;
  const DbHandles& handles() const { return h_; }
  // Tests only: hooks into the sealer (storage/sealer.h).
  void setSealerTestHooks(SealerTestHooks hooks);
  // Raw iteration over one column family ("meta", "head", "chunk") for dumps; stops when
  // fn returns false.
  Status forEachRaw(std::string_view cf, const std::function<bool(std::string_view key, std::string_view value)>& fn) const;

 private:
  RocksStore() = default;
  Status openImpl(const std::string& dir, const StoreOptions& options);
  Status checkFormat();
  // Counts this open in meta (synced): session ids are (opens << 32) | counter.
  Status beginSessionEpoch();
  Status loadJobs();
  Status seal(bool all);
  Status writeBatchFor(std::span<const WriteRequest> requests);
  // Encodes records into head entries of a session id of their own, into *batch; returns
  // their bytes (keys and values); each entry, as the head index keeps it, is appended to *head_entries.
  uint64_t putRecordEntries(JobId job, std::span<const model::StepRecord> records, rocksdb::WriteBatch* batch,
                            std::vector<HeadIndex::Entry>* head_entries);
  // Bytes (keys and values) of the head entries under `prefix`; on_key, if set, sees each key.
  Result<uint64_t> headBytesUnder(const std::string& prefix, const std::function<void(std::string_view key)>& on_key = {}) const;
  // At open: counts the head's bytes into head_bytes_ and lists its entries in head_index_.
  Status loadHead();
  // A cursor for spec with its plan made (RocksScanCursor::init) on up to `threads` threads.
  Result<std::unique_ptr<RocksScanCursor>> planScan(const ScanSpec& spec, size_t threads) const;
  // The base of the highest block with steps rows of job `id` (sealed chunks or head entries).
  Result<std::optional<uint64_t>> lastBlockBase(JobId id) const;
  // A step of the block some rank has in head, from an entry's header (nothing decoded):
  // a lower bound of the block's last step. Nullopt when no entry is found.
  std::optional<uint64_t> headStepIn(JobId id, uint64_t block_base) const;
  rocksdb::ColumnFamilyHandle* cfByName(std::string_view cf) const;
  // Calls fn(id, key, value) for each meta entry of `kind` of the job, ids ascending (the
  // key's big-endian id after the kind byte); NotFound if the job is absent.
  Status forEachJobData(std::string_view job, JobDataKind kind,
                        const std::function<Status(uint64_t id, std::string_view key, std::string_view value)>& fn) const;
  // A job's dictionary of one kind: each entry decoded by `decode`, its id set by `set_id`.
  template <typename Entry, typename Decode, typename SetId>
  Result<std::vector<Entry>> dictionary(std::string_view job, JobDataKind kind, Decode decode, SetId set_id) const;

  std::string dir_;
  StoreOptions options_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // all opened, for destruction
  DbHandles h_;
  HeadIndex head_index_;  // h_.head_index

  std::atomic<uint64_t> next_session_id_{0};
  std::atomic<uint64_t> head_bytes_{0};
  std::atomic<uint64_t> last_finding_ns_{0};  // addFinding's last key: keys stay unique

  // Writes hold it shared; dropJob/applyRetention exclusive, so no write lands in a job
  // while its ranges are being deleted.
  mutable std::shared_mutex drop_mu_;
  // Writes of head entries and JobInfo hold it shared from building their batch to applying
  // it in memory; setRetention holds it exclusive (M2).
  CommitGate gate_;
  // Guards the job maps and their JobInfo fields. Held across a RocksDB write only by
  // ensureJob (rare) and setRetention (which holds gate_ exclusive, so no write is in flight).
  mutable std::mutex jobs_mu_;
  std::map<std::string, JobInfo, std::less<>> jobs_;  // GUARDED_BY(jobs_mu_)
  std::unordered_map<JobId, std::string> job_names_;  // GUARDED_BY(jobs_mu_)
  uint32_t next_job_id_ = 1;                          // GUARDED_BY(jobs_mu_)

  // meta key -> hash of the value last written: dictionaries and topology are rewritten
  // only when new or changed.
  mutable std::mutex cache_mu_;
  std::unordered_map<std::string, uint64_t> meta_cache_;  // GUARDED_BY(cache_mu_)

  mutable std::mutex seal_mu_;  // one sealer at a time (a re-seal reads, merges and rewrites chunks)
  SealStats last_seal_;  // GUARDED_BY(seal_mu_)
  std::unique_ptr<Sealer> sealer_;  // GUARDED_BY(seal_mu_): kept for its reused buffers
};

}  // namespace argus::storage
