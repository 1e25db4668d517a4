// WindowOperator: window functions (docs/query/language.md, "Window functions"). Buffers
// its input's rows column-wise with the windows' arguments and keys, then per window lays
// the rows out in the window's order (WindowLayout: sorted, unless the planner found the
// input already in that order) and fills one result column. Emits the input rows in their
// input order, each with its window results appended: [input..., window 0, window 1, ...].
// Windows with the same PARTITION BY, ORDER BY and frame one after the other share a layout.
//
// Streaming: when every window is presorted and all share one non-empty PARTITION BY (say
// `PARTITION BY rank ORDER BY step` over the scan's (rank, step) order), partitions arrive
// whole, one after another. Then the operator computes and emits the complete partitions
// buffered so far whenever it holds a batch of rows, keeping only the partition still
// arriving: memory is bounded by the largest partition plus a batch, not the input.
//
// Split (PhysicalOperator::split): a streaming window partitioned by the scan's rank, over a
// table scan (perhaps filtered), runs as one copy per part of the scan: a part's stripes hold
// whole ranks, so each partition lies in one part. A copy keeps each row's order and never
// puts two orders in one output chunk.
#pragma once

#include "query/binder/bound_select.h"
#include "query/execution/expression_executor.h"
#include "query/execution/physical_operator.h"
#include "query/execution/window_layout.h"

namespace argus::query {

class WindowOperator final : public PhysicalOperator {
 public:
  WindowOperator(QueryContext& ctx, PhysicalOperatorPtr child, std::vector<BoundWindow> windows, std::vector<std::string> out_names);
  bool produce(DataChunk& chunk) override;
  std::string describe() const override;
  std::vector<PhysicalOperatorPtr> split(size_t threads, SplitOrder order) override;

 private:
  // Whether every partition lies within one part of a split scan: a streaming window whose
  // PARTITION BY holds the scan's rank column, over the scan (perhaps filtered).
  bool partitionsWithinParts() const;
  // The buffered columns of one window's expressions, by index into buffer_.
  struct Slots {
    std::vector<size_t> args, partitions, orders;
  };
  // Appends input chunks until `rows_` reaches `until` or the input ends.
  void readInput(size_t until);
  // The first row of the last partition in the buffer (0 when it holds one partition).
  size_t lastPartitionStart() const;
  // Fills results_ for buffered rows [0, rows): whole partitions only.
  void computeWindows(size_t rows);
  // Drops the emitted rows [0, ready_), moving the rest (and their strings) to the front.
  void dropEmitted();
  size_t heldBytes() const;
  std::vector<const Vector*> columns(const std::vector<size_t>& slots) const;
  bool sameLayout(const BoundWindow& a, const BoundWindow& b) const;

  std::vector<BoundWindow> windows_;
  std::vector<Slots> slots_;
  std::vector<ExpressionExecutor> executors_;  // every argument and key, evaluated per input chunk
  std::vector<LogicalType> expr_types_;
  MemoryReservation memory_;

  bool streaming_ = false;
  bool input_done_ = false;
  std::vector<Vector> buffer_;  // the input's columns, then one per executor
  size_t rows_ = 0;             // buffered
  size_t ready_ = 0;            // buffered rows [0, ready_) have their results
  size_t emitted_ = 0;          // of the ready rows
  Arena arena_;                 // strings and histograms of the buffered rows and the results
  std::vector<Vector> results_;
  WindowLayout layout_;
  bool keep_order_ = false;  // a split copy: row_order_ per buffered row
  std::vector<uint64_t> row_order_;
};

}  // namespace argus::query
