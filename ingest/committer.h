// Committer: group commit for all ingest sessions (docs/wire/protocol.md, "Durability").
//
// Sessions submit decoded batches; ONE committer thread takes everything queued, writes it
// with a single Store::writeGroup (one WriteBatch, one WAL sync), and only then reports
// back to each batch's sink, which acknowledges up to that batch's last seq. A failed
// write acknowledges nothing: every sink of the group gets the error (when the failure
// looks data-dependent the group is retried request by request, so one bad batch cannot
// fail its neighbours).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "base/status.h"
#include "ingest/byte_budget.h"
#include "ingest/ingest_metrics.h"
#include "model/step_record.h"
#include "storage/store.h"

namespace argus::ingest {

// Receives the outcome of a submitted batch. Called on the committer thread: implementations
// post to their own executor and return at once.
class CommitSink {
 public:
  virtual ~CommitSink() = default;
  virtual void onCommitted(uint64_t up_to, size_t bytes, const Status& status) = 0;
};

struct CommitItem {
  std::shared_ptr<CommitSink> sink;
  storage::JobId job = 0;
  std::optional<model::RankTopology> topology;
  std::vector<model::KernelDictEntry> kernels;
  std::vector<model::StackDictEntry> stacks;
  std::vector<model::StringDictEntry> strings;
  std::vector<model::StepRecord> records;  // canonical, in seq order
  uint64_t up_to = 0;                      // last seq in records; 0 when none
  size_t bytes = 0;                        // charged to the session and the global budget
};

struct CommitterOptions {
  size_t max_group_records = 200000;     // split larger queues into several commits
  size_t max_group_bytes = 64u << 20;
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

 private:
  void run();
  void commitGroup(std::vector<CommitItem>& group);

  storage::Store& store_;
  IngestMetrics& metrics_;
  ByteBudget& budget_;
  const CommitterOptions options_;

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable idle_cv_;
  std::deque<CommitItem> queue_;  // GUARDED_BY(mu_)
  bool busy_ = false;             // GUARDED_BY(mu_): a group is being written
  bool stopping_ = false;         // GUARDED_BY(mu_)
  bool stopped_ = false;          // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace argus::ingest
