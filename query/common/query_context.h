// QueryContext: what one running query owns besides its operators: the deadline, the memory
// cap and its accounting, and the figures reported in QueryStats. Operators call check()
// once per chunk, so a query past its deadline (or cancelled) stops within one chunk's work,
// and report the bytes they hold through a MemoryReservation, so one past its cap stops at
// the chunk that crossed it. Both throw ExecutionError; the operators' destructors free everything.
// One thread runs a query's operators; an operator may run parts of its work on more
// (its scans read on more), which may call check() and account() (and only those).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace argus::query {

struct QueryOptions {
  std::chrono::nanoseconds deadline = std::chrono::seconds(30);  // from the start of the query
  size_t memory_limit_bytes = size_t{1} << 30;
  // Push job, rank and step predicates into the store's scan (off: scan every job and step
  // and filter afterwards; same answers, for tests and comparisons).
  bool pushdown = true;
  size_t max_query_bytes = 1 << 20;  // longer query text is refused by the parser
  // Set by another thread to stop the query at its next check(): the shell's Ctrl-C, or
  // argusd when the client that asked has gone. Null: nothing cancels but the limits.
  const std::atomic<bool>* cancel = nullptr;
  // Threads reading and decoding each table scan (storage::ScanSpec::threads); the
  // operators run on the query's own thread. 0: one per core, at most 8.
  size_t scan_threads = 0;
};

struct QueryStats {
  uint64_t rows = 0;            // rows in the result
  uint64_t rows_scanned = 0;    // rows the table scans produced
  uint64_t values_scanned = 0;  // rows x stored columns the scans produced
  uint64_t jobs_scanned = 0;
  uint64_t chunks_read = 0;
  uint64_t chunks_skipped = 0;
  uint64_t head_rows_read = 0;
  uint64_t peak_memory_bytes = 0;
  int64_t elapsed_ns = 0;
};

class QueryContext {
 public:
  explicit QueryContext(const QueryOptions& options);
  const QueryOptions& options() const { return options_; }
  QueryStats& stats() { return stats_; }

  // Throws ExecutionError once the deadline has passed or the query was cancelled.
  void check();
  int64_t elapsedNs() const;
  // Adds delta (may be negative) to the bytes held; throws ExecutionError naming `what`
  // when the total passes the cap.
  void account(int64_t delta, const char* what);
  size_t usedBytes() const {
    std::lock_guard lock(memory_mu_);
    return used_;
  }

 private:
  QueryOptions options_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point deadline_;
  mutable std::mutex memory_mu_;
  size_t used_ = 0;  // GUARDED_BY(memory_mu_), as is stats_.peak_memory_bytes
  QueryStats stats_;
};

// Holds the bytes one operator reports, and gives them back on destruction.
class MemoryReservation {
 public:
  MemoryReservation(QueryContext& ctx, const char* what) : ctx_(ctx), what_(what) {}
  ~MemoryReservation() { ctx_.account(-static_cast<int64_t>(bytes_), what_); }
  MemoryReservation(const MemoryReservation&) = delete;
  MemoryReservation& operator=(const MemoryReservation&) = delete;
  // Sets the bytes held now (throws past the cap).
  void set(size_t bytes) {
    int64_t delta = static_cast<int64_t>(bytes) - static_cast<int64_t>(bytes_);
    bytes_ = bytes;
    ctx_.account(delta, what_);
  }

 private:
  QueryContext& ctx_;
  const char* what_;
  size_t bytes_ = 0;
};

// "1.5 GiB", "512 KiB", "100 B".
std::string bytesText(uint64_t bytes);

}  // namespace argus::query
