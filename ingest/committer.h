// Committer: group commit for all ingest sessions (docs/wire/protocol.md, "Durability").
//
// Sessions submit decoded batches; a committer thread takes everything queued in its lane,
// writes it with a single Store::writeGroup (one WriteBatch, one WAL sync), and only then
// reports back to each batch's sink, which acknowledges up to that batch's last seq.
// Several committer threads (CommitterOptions::threads) write groups concurrently: RocksDB
// merges their WriteBatches into one WAL write and sync, and the memtable inserts run in
// parallel (sessions hand over head entries already built; records, when given, are
// encoded by the store). Every sink's batches go to one lane (by sink), written in
// submission order: a session's batches become durable in order, never a later one before
// an earlier one. Acks need that (an Ack never covers an earlier batch still being
// written), and so do head entries: a later entry continues the delta chain of the one
// before it, and the sealer seals a block once the session's next block is in head. A failed
// write acknowledges nothing: every sink of the group gets the error (when the failure
// looks data-dependent the group is retried request by request, so one bad batch cannot
// fail its neighbours).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "ingest/byte_budget.h"
#include "ingest/ingest_metrics.h"
#include "model/step_record.h"
#include "model/step_summary.h"
#include "storage/store.h"

namespace argus::ingest {

// Receives the outcome of a submitted batch. Called on the committer thread: implementations
// post to their own executor and return at once.
class CommitSink {
 public:
  virtual ~CommitSink() = default;
  virtual void onCommitted(uint64_t up_to, size_t bytes, const Status& status) = 0;
};

// Head entries a session built while decoding (storage/head_entry.h: the records as they
// arrived, one entry per block), their values back to back in one arena. Offsets, not
// views: the item moves between threads.
struct HeadEntries {
  struct Entry {
    uint32_t rank = 0;
    uint64_t block_base = 0;
    uint64_t first_seq = 0;
    size_t offset = 0;  // into arena
    size_t size = 0;
  };
  uint64_t session = 0;  // Store::newSessionId() of the session
  std::string arena;
  std::vector<Entry> entries;  // in seq order
  std::vector<model::StepSummary> summaries;  // one per record, in seq order (on_durable)
  size_t records = 0;          // in all entries
};

struct CommitItem {
  std::shared_ptr<CommitSink> sink;
  storage::JobId job = 0;
  std::optional<model::RankTopology> topology;
  std::vector<model::KernelDictEntry> kernels;
  std::vector<model::StackDictEntry> stacks;
  std::vector<model::StringDictEntry> strings;
  std::vector<model::StepRecord> records;  // canonical, in seq order (encoded by the store)
  HeadEntries encoded;                     // or head entries already built (ingest sessions)
  uint64_t up_to = 0;                      // last seq in records/encoded; 0 when none
  size_t bytes = 0;                        // charged to the session and the global budget
};

struct CommitterOptions {
  size_t max_group_records = 200000;     // split larger queues into several commits
  size_t max_group_bytes = 64u << 20;
  int threads = 2;                       // concurrent group commits (>= 1)
  // Told of each batch with records once it is durable (its job and a summary of each
  // record), on the committer thread before its sink: it must return at once. The
  // continuous diagnosis runs as soon as every rank of a job has sent a step, on these
  // summaries (diagnose/monitor.h).
  std::function<void(storage::JobId job, std::span<const model::StepSummary> records)> on_durable;
};

class Committer {
 public:
  Committer(storage::Store& store, IngestMetrics& metrics, ByteBudget& budget, CommitterOptions options = {});
  ~Committer();  // stop()

  void start();
  // Queues a batch; the global budget is charged here and released after the commit.
  void submit(CommitItem&& item);
  // Blocks until everything submitted so far is committed (or failed) and reported.
  void drain();
  // drain(), then ends the thread. Later submits are failed with Unavailable.
  void stop();
  // A HeadEntries for the next batch: one a committed batch gave back (arena and entries
  // keep their capacity), or an empty one. Cleared. Thread-safe.
  HeadEntries takeEncodedBuffer();

 private:
  // One committer thread: takes groups from its lane until stopped.
  void run(size_t lane);
  // Writes the group, then reports each item's outcome to its sink.
  void commitGroup(std::vector<CommitItem>& group);
  void notifyDurable(const CommitItem& item) const;  // REQUIRES: options_.on_durable
  bool idle() const;  // REQUIRES: mu_ held

  storage::Store& store_;
  IngestMetrics& metrics_;
  ByteBudget& budget_;
  const CommitterOptions options_;

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable idle_cv_;
  struct Lane {
    std::deque<CommitItem> queue;
    bool busy = false;  // a group taken from it is being written
  };
  std::vector<Lane> lanes_;       // GUARDED_BY(mu_): one per thread
  bool stopping_ = false;         // GUARDED_BY(mu_)
  bool stopped_ = false;          // GUARDED_BY(mu_)
  std::vector<std::thread> threads_;

  // Committed batches' head entries, handed out by takeEncodedBuffer().
  std::mutex pool_mu_;
  std::vector<HeadEntries> encoded_pool_;  // GUARDED_BY(pool_mu_)
};

}  // namespace argus::ingest
