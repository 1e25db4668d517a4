// ParallelScanCursor: one scan read and decoded by several threads, its rows still in
// (rank, step) order.
//
// The scan is split into parts (storage/scan_parts.h), each run by one of the process's
// worker threads that is idle (base/worker_threads.h: tryLendWorker). A worker fills a queue
// of its own, at most `depth` batches ahead, with its part's stripes: each stripe's batches,
// then an end mark. The reader takes stripe 0 from part 0, stripe 1 from part 1, and so on,
// joining short batches where stripes end into full ones; it reads a part no worker took
// itself, a batch at a time as it needs them. Reading chunks and decoding them (most of a
// scan's time) so runs on the workers' cores while the reader's operators run on its own.
//
// The first worker error reaches the reader after the batches before it, in order; the
// destructor stops the workers after the batch each is filling. Only one thread may call
// next() and stats().
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "base/worker_threads.h"
#include "storage/store.h"

namespace argus::storage {

class ParallelScanCursor final : public ScanCursor {
 public:
  // A worker per part while idle ones last.
  explicit ParallelScanCursor(std::unique_ptr<ScanParts> parts, size_t depth = 16);
  ~ParallelScanCursor() override;

  Status next(ColumnBatch* batch, bool* has_rows) override;
  // Summed over the workers, as of the batches next() returned.
  const ScanStats& stats() const override { return stats_; }

 private:
  struct Item {
    ColumnBatch batch;
    bool stripe_end = false;  // no batch: the stripe's last was the one before
    Status error;             // with stripe_end: the worker failed here
    ScanStats stats;          // the worker's, as of this item
  };
  struct Worker {
    ScanPart* part;
    std::deque<Item> ready;            // GUARDED_BY(mu_)
    std::vector<ColumnBatch> spare;    // GUARDED_BY(mu_): handed back, buffers kept
    ScanStats taken;                   // the reader's: stats of the last item taken
    // Each side sleeps on its own condition and is woken only when it waits: a wake-up per
    // batch cost more than the handoff itself.
    std::condition_variable item_ready, room_ready;
    bool reader_waits = false;  // GUARDED_BY(mu_)
    bool worker_waits = false;  // GUARDED_BY(mu_)
    bool lent = false;          // a worker runs the part; else the reader reads it
    bool in_stripe = false;     // fill()'s: the part is within a stripe
  };
  void stopWorkers();  // stops the lent workers and waits for them
  void run(size_t w);
  void runStripes(size_t w);
  // The part's next item: a batch of its stripe, or the stripe's end (with the error that
  // ended it); false once the part has no stripes left. Only one thread fills a part.
  static bool fill(Worker& me, Item* item);
  // REQUIRES: mu_ held. A batch w's reader handed back, buffers kept; else an empty one.
  static ColumnBatch takeSpare(Worker& w);
  // Appends from's rows to *to (same columns).
  static void append(ColumnBatch& from, ColumnBatch* to);

  std::unique_ptr<ScanParts> parts_;  // outlive the workers
  const size_t stripes_;
  const size_t batch_rows_;
  const size_t depth_;
  std::vector<std::unique_ptr<Worker>> workers_;
  size_t stripe_ix_ = 0;  // the stripe the reader is on
  bool failed_ = false;
  ScanStats stats_;

  std::mutex mu_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  WorkerLoans loans_;  // the parts on workers
};

}  // namespace argus::storage
