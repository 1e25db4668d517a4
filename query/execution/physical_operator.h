// PhysicalOperator: a pull-based, vectorized operator (DuckDB-style). next() fills a chunk
// of up to kVectorSize rows (perhaps with a selection) and returns false at the end; the
// chunk's data stays valid until the next call. Operators call QueryContext::check() once
// per chunk they consume, so deadlines hold within a chunk's work.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "query/common/query_context.h"
#include "query/common/vector.h"

namespace argus::query {

// How the copies of a split pipeline share its scan's stripes (storage::ScanSpec::contiguous_parts).
enum class SplitOrder {
  kInterleaved,  // round-robin: the copies advance together, for a reader that takes the rows in order (Gather)
  kContiguous,   // one run of stripes each, read in one pass: for a consumer of each copy on its own (HashAggregate)
};

// What an operator produced under EXPLAIN ANALYZE, its copies in a split pipeline included
// (they run on other threads: the counters are shared).
struct OperatorProfile {
  std::atomic<uint64_t> rows{0}, chunks{0}, ns{0};  // ns: inside next(), its inputs' time included
  std::atomic<uint32_t> copies{0};                  // split() copies that ran in its place
};

// Adds the time from its construction to its end to a profile's `ns` (none: does nothing).
class ProfileTimer {
 public:
  explicit ProfileTimer(OperatorProfile* profile) : profile_(profile), start_(profile ? Clock::now() : Clock::time_point{}) {}
  ~ProfileTimer() {
    if (profile_) profile_->ns += static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start_).count());
  }
  ProfileTimer(const ProfileTimer&) = delete;
  ProfileTimer& operator=(const ProfileTimer&) = delete;

 private:
  using Clock = std::chrono::steady_clock;
  OperatorProfile* profile_;
  Clock::time_point start_;
};

class PhysicalOperator {
 public:
  explicit PhysicalOperator(QueryContext& ctx) : ctx_(ctx) {}
  virtual ~PhysicalOperator() = default;
  PhysicalOperator(const PhysicalOperator&) = delete;
  PhysicalOperator& operator=(const PhysicalOperator&) = delete;

  // Fills chunk with the next non-empty set of rows; false when there are no more.
  bool next(DataChunk& chunk) { return profile_ ? nextProfiled(chunk) : produce(chunk); }
  // One line for EXPLAIN: the operator and what it was planned with.
  virtual std::string describe() const = 0;

  // Parallel consumers (HashAggregate): copies of this pipeline down to the table scan at
  // its bottom, one per part of that scan (TableScan::split), for up to `threads` threads,
  // each copy driven by one thread and its chunks marked with their order; empty when the
  // pipeline cannot be split (the default). Instead of next(): the copies live as long as
  // this operator, and finishSplit() runs once their threads are done.
  virtual std::vector<std::unique_ptr<PhysicalOperator>> split(size_t threads, SplitOrder order) { return {}; }
  virtual void finishSplit() {
    for (auto& c : children_) c->finishSplit();
  }

  const std::vector<std::unique_ptr<PhysicalOperator>>& children() const { return children_; }
  std::vector<std::string> names;  // output columns
  std::vector<LogicalType> types;

  // EXPLAIN ANALYZE: counts what this operator and every one below it produce from now on.
  void enableProfiles();
  const OperatorProfile* profile() const { return profile_.get(); }

 protected:
  // next() without the counting.
  virtual bool produce(DataChunk& chunk) = 0;
  // For work of this operator outside next() (a split scan's listing): a ProfileTimer's.
  OperatorProfile* profileToUpdate() const { return profile_.get(); }
  // A copy of this operator that split() made: counted as this one.
  template <typename Op>
  std::unique_ptr<Op> countedAsThis(std::unique_ptr<Op> copy) const {
    copy->profile_ = profile_;
    if (profile_) ++profile_->copies;
    return copy;
  }

  QueryContext& ctx_;
  std::vector<std::unique_ptr<PhysicalOperator>> children_;

 private:
  bool nextProfiled(DataChunk& chunk);
  std::shared_ptr<OperatorProfile> profile_;  // null: not counted
};
using PhysicalOperatorPtr = std::unique_ptr<PhysicalOperator>;

// The indented operator tree, one line per operator; with `profiled`, each followed by what
// it produced (EXPLAIN ANALYZE).
std::vector<std::string> explainLines(const PhysicalOperator& root, bool profiled = false);

}  // namespace argus::query
