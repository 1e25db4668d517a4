// Gather: runs the split copies of its input (PhysicalOperator::split) on the process's
// worker threads (base/worker_threads.h: tryLendWorker), as many as are idle, and hands
// their rows on in the input's order, for the consumers that read rows in order rather than
// merging per-thread states: the query's result, a sort, a limit (a HashAggregate drives
// split input itself). Input that cannot be split, or one thread, is read through as it is.
//
// Order: each chunk of a split pipeline says where its rows stand (DataChunk::order), one
// copy's chunks ascend, and all rows of one order come from one copy. So the next chunk is
// the least-ordered among the copies' first queued ones, once every copy that has not
// ended has one queued: the same rows in the same order as one thread.
//
// Each copy fills up to kQueued chunks ahead of the reader. A chunk's numbers are its own;
// its strings and histograms are views into the copy's buffers, valid only until that
// copy's next call, so they are copied into the chunk's arena. A copy's error stops the
// others and is thrown to the reader; a reader that stops early (LIMIT, an error above)
// stops the copies and waits for their workers when the Gather is destroyed. Workers, not
// threads of each query's own: a rolling median's threads started per query faulted in
// their stacks, allocator caches and decoder scratch again at every run.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/worker_threads.h"
#include "query/common/arena.h"
#include "query/execution/physical_operator.h"

namespace argus::query {

class Gather final : public PhysicalOperator {
 public:
  Gather(QueryContext& ctx, PhysicalOperatorPtr child);
  ~Gather() override;

  bool produce(DataChunk& chunk) override;
  // Empty: EXPLAIN shows the input as planned (whether it splits depends on the machine).
  std::string describe() const override { return {}; }

 private:
  // A copy's worker, once its queue is full, sleeps until half of it is free again and then
  // refills it: woken per chunk, the threads switched in and out ~2,000 times per query of
  // 2 M rows (a sixth of its time in the scheduler).
  static constexpr size_t kQueued = 8;
  static constexpr size_t kRefill = kQueued / 2;
  struct Slot {
    DataChunk chunk;
    Arena arena;  // the chunk's strings and histograms
  };
  struct Copy {
    PhysicalOperatorPtr op;
    Slot slots[kQueued];
    std::deque<Slot*> ready;  // filled, in order
    std::vector<Slot*> free;
    std::condition_variable has_free;
    bool ended = false;
    bool threaded = false;  // on a worker; else the reader runs it when it needs its next chunk
  };

  void start();
  // Fills one of c's free slots from its operator (outside the lock); false once it ended.
  bool fillOne(Copy& c, std::unique_lock<std::mutex>& lock);
  void run(Copy& c);  // a copy's worker
  void stopCopies();  // stops the copies and waits for their workers
  void finish();  // the copies' statistics, once their workers are done

  std::mutex mu_;
  std::condition_variable has_ready_;
  std::vector<std::unique_ptr<Copy>> copies_;
  WorkerLoans loans_;  // the copies on workers
  Slot* current_ = nullptr;  // handed to the reader: its copy reuses it at the next call
  Copy* current_copy_ = nullptr;
  std::exception_ptr error_;
  bool stop_ = false;
  bool started_ = false;
  bool finished_ = false;
};

// child under a Gather when the query may run on more than one thread; else child itself.
PhysicalOperatorPtr gathered(QueryContext& ctx, PhysicalOperatorPtr child);

}  // namespace argus::query
