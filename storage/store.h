// Store: the columnar store on RocksDB (DESIGN §5, docs/format/).
//
// Column families: `meta` (format version, jobs, topology, dictionaries), `head` (recent
// records as they arrived, encoded, made durable by the WAL: where an acknowledged record
// first lives), `chunk` (sealed column chunks). Thread-safety: all methods may be called
// concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/step_record.h"
#include "storage/column_batch.h"

namespace argus::storage {

using JobId = uint32_t;  // dense, assigned on first use, never reused

struct StoreOptions {
  // fsync the WAL before write() returns. On: an acknowledged record survives power loss.
  // Off: it survives a process crash (SIGKILL) but not a machine crash.
  bool sync_wal = true;
  uint32_t block_steps = 256;  // steps per sealed chunk (a power of two)
  bool create_if_missing = true;
  bool read_only = false;      // open an existing store without writing (dump, inspection)
  // RocksDB's block cache, shared by every column family: the blocks queries read again.
  // It fills as blocks are read, up to this. RocksDB's default (32 MiB) holds a few columns'
  // blocks of a 10,000-rank job; past that a repeated scan reads them again (~5% of a
  // per-step scan, bench/query_vs_duckdb.sh).
  size_t block_cache_bytes = size_t{512} << 20;
};

struct JobInfo {
  JobId id = 0;
  std::string name;
  int64_t created_ns = 0;
  int64_t last_write_ns = 0;
  int64_t retention_ns = 0;  // 0: keep forever
};

// One head entry built by the caller (storage/head_entry.h): records of one rank and block
// from one session, as encoded on the wire, their chains starting with a keyframe
// (model/step_chain.h). The store checks the key, not the records (the session decoded
// them). The bytes must stay valid until write()/writeGroup() returns.
struct EncodedEntry {
  uint32_t rank = 0;
  uint64_t block_base = 0;  // a multiple of the store's block_steps, <= INT64_MAX
  uint64_t session = 0;     // from Store::newSessionId()
  uint64_t first_seq = 0;   // unique per entry within the session
  std::string_view value;
};

// What one ingest commit writes, atomically (one RocksDB WriteBatch).
struct WriteRequest {
  JobId job = 0;
  const model::RankTopology* topology = nullptr;  // stored when set
  std::span<const model::KernelDictEntry> kernels;
  std::span<const model::StackDictEntry> stacks;
  std::span<const model::StringDictEntry> strings;
  std::span<const model::StepRecord> records;  // canonical; the store encodes them
  // Entries already built (ingest sessions store records as they arrived).
  std::span<const EncodedEntry> entries;
};

// Which rows a scan returns. Empty `columns` means all columns of the table; empty
// `ranks` means all ranks. Steps are [from_step, to_step).
struct ScanSpec {
  std::string job;
  Table table = Table::kSteps;
  std::vector<std::string> columns;
  uint64_t from_step = 0;
  uint64_t to_step = UINT64_MAX;
  std::vector<uint32_t> ranks;
  size_t batch_rows = 4096;
  // Threads that read and decode (parallel_scan_cursor.h); 1: the caller's thread only.
  // Rows come in the same order either way.
  size_t threads = 1;
  // Store::scanParts: each part takes one run of consecutive stripes instead of every
  // parts-th stripe. For readers of each part on its own: a part then reads its ranks in
  // one pass, where round-robin parts step over each other's stripes.
  bool contiguous_parts = false;
  // Most bytes of chunk values a scan's plan keeps from its listing (storage/scan_cursor.h);
  // chunks past it are read again when the scan reaches them.
  size_t plan_bytes = size_t{32} << 20;
  // Most heap bytes the plan's list of chunk sets may take (a set per rank and block of
  // steps: years of a large job's steps are millions). Past it the scan fails with
  // ResourceExhausted while listing, before the list grows any further.
  size_t max_plan_bytes = size_t{1} << 30;
};

// Chunk counts depend on how a scan finds its blocks (scan_cursor.h): one that reads stored
// columns of the steps table decodes a block's _steps only when the block has gaps.
struct ScanStats {
  uint64_t chunks_read = 0;
  uint64_t chunks_skipped = 0;  // by statistics
  uint64_t head_rows_read = 0;
  uint64_t head_entries_read = 0;  // head entries walked to find them (head_index.h)
  // Heap bytes the scan's plan holds while the scan lives: its chunk sets and the lead
  // values it kept (ScanSpec::plan_bytes bounds those). A split scan's parts share one plan
  // and each reports it.
  uint64_t plan_bytes = 0;
};

// Yields column batches in (rank, step) order; for each (rank, step) only the highest
// attempt. A chunk whose checksum or codec fails to verify yields Corruption naming its key.
class ScanCursor {
 public:
  virtual ~ScanCursor() = default;
  // Fills *batch with up to spec.batch_rows rows; returns false in *has_rows at the end.
  virtual Status next(ColumnBatch* batch, bool* has_rows) = 0;
  virtual const ScanStats& stats() const = 0;
};

// One part of a scan split among threads (Store::scanParts). The scan's ranks are cut into
// stripes of consecutive ranks, dealt round-robin to the parts (or in runs:
// ScanSpec::contiguous_parts); one thread drives each part.
// Parts share the scan's plan and snapshot, with reads and buffers of their own.
class ScanPart : public ScanCursor {
 public:
  // Moves to this part's next stripe; false when none is left.
  virtual bool nextStripe() = 0;
  // The current stripe's index in the scan: the rows of the whole scan, in (rank, step)
  // order, are the stripes' rows in stripe order.
  virtual size_t stripe() const = 0;
  // next() yields the current stripe's rows in order; has_rows false at its end.
};

class ScanParts {
 public:
  virtual ~ScanParts() = default;
  virtual size_t size() const = 0;
  virtual size_t stripes() const = 0;
  virtual size_t batchRows() const = 0;
  virtual ScanPart& part(size_t i) = 0;
};

class Store {
 public:
  static Result<std::unique_ptr<Store>> open(const std::string& dir, const StoreOptions& options = {});
  virtual ~Store() = default;

  // Jobs. ensureJob creates the job on first use.
  virtual Result<JobId> ensureJob(std::string_view job) = 0;
  virtual Result<JobInfo> findJob(std::string_view job) const = 0;  // NotFound if absent
  virtual std::vector<JobInfo> listJobs() const = 0;
  virtual Status setRetention(std::string_view job, int64_t retention_ns) = 0;

  // Durable write (see StoreOptions::sync_wal). Idempotent: writing the same
  // (job, rank, step, attempt) again stores it once.
  virtual Status write(const WriteRequest& request) = 0;
  // Write several requests in one WriteBatch and one WAL sync (group commit).
  virtual Status writeGroup(std::span<const WriteRequest> requests) = 0;
  // A session id no other session of this store ever had (EncodedEntry::session).
  virtual uint64_t newSessionId() = 0;
  // Steps per block: head entries and sealed chunks are cut by it.
  virtual uint32_t blockSteps() const = 0;
  // Bytes (keys and values) of the head entries not sealed yet: what ingest backpressure
  // watches. Exact, kept up to date by writes, seals and drops.
  virtual uint64_t headBytes() const = 0;

  // Moves head entries of complete blocks (a later block exists for the rank) into chunks.
  virtual Status sealReady() = 0;
  // Seals everything, partial blocks included (shutdown, tests, dumps).
  virtual Status sealAll() = 0;

  virtual Result<std::unique_ptr<ScanCursor>> scan(const ScanSpec& spec) const = 0;
  // The same rows as scan(spec), split into at most `parts` parts (at least one) for as many
  // threads (spec.threads is ignored).
  virtual Result<std::unique_ptr<ScanParts>> scanParts(const ScanSpec& spec, size_t parts) const = 0;
  // The highest step of `job` in table steps over every rank (nullopt: no steps yet);
  // NotFound if the job is absent. Reads the keys of the last block and that block's step
  // column, not the job's rows: what `last N steps` queries start from.
  virtual Result<std::optional<uint64_t>> lastStep(std::string_view job) const = 0;

  // Topology and dictionaries as stored.
  virtual Result<std::vector<model::RankTopology>> topology(std::string_view job) const = 0;
  virtual Result<model::KernelDictEntry> kernelName(std::string_view job, uint64_t signature) const = 0;
  // Every kernel dictionary entry of the job, by signature ascending.
  virtual Result<std::vector<model::KernelDictEntry>> kernelNames(std::string_view job) const = 0;
  // Every stack dictionary entry of the job (frames leaf first), by stack id ascending.
  virtual Result<std::vector<model::StackDictEntry>> stackNames(std::string_view job) const = 0;
  // Every string dictionary entry of the job (the text behind events' name_id), by id ascending.
  virtual Result<std::vector<model::StringDictEntry>> names(std::string_view job) const = 0;

  // Findings the continuous diagnosis recorded for `job`: opaque values (their layout is
  // diagnose/finding_record.h's), listed in the order added, dropped with the job.
  virtual Status addFinding(std::string_view job, std::string_view value) = 0;
  virtual Result<std::vector<std::string>> findings(std::string_view job) const = 0;

  virtual Status dropJob(std::string_view job) = 0;  // range deletes
  // Drops every job whose last write is older than its retention.
  virtual Status applyRetention(int64_t now_ns) = 0;

  struct SizeInfo {
    uint64_t live_bytes = 0;  // SST + WAL bytes on disk
    uint64_t head_entries = 0;  // estimate
    uint64_t chunks = 0;      // estimate
  };
  virtual SizeInfo size() const = 0;
};

}  // namespace argus::storage
