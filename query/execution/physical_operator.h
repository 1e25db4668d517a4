// PhysicalOperator: a pull-based, vectorized operator (DuckDB-style). next() fills a chunk
// of up to kVectorSize rows (perhaps with a selection) and returns false at the end; the
// chunk's data stays valid until the next call. Operators call QueryContext::check() once
// per chunk they consume, so deadlines hold within a chunk's work.
#pragma once

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

class PhysicalOperator {
 public:
  explicit PhysicalOperator(QueryContext& ctx) : ctx_(ctx) {}
  virtual ~PhysicalOperator() = default;
  PhysicalOperator(const PhysicalOperator&) = delete;
  PhysicalOperator& operator=(const PhysicalOperator&) = delete;

  // Fills chunk with the next non-empty set of rows; false when there are no more.
  virtual bool next(DataChunk& chunk) = 0;
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

 protected:
  QueryContext& ctx_;
  std::vector<std::unique_ptr<PhysicalOperator>> children_;
};
using PhysicalOperatorPtr = std::unique_ptr<PhysicalOperator>;

// The indented operator tree, one line per operator.
std::vector<std::string> explainLines(const PhysicalOperator& root);

}  // namespace argus::query
