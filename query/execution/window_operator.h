// WindowOperator: window functions (docs/query/language.md, "Window functions"). Buffers
// its input's rows column-wise with the windows' arguments and keys, then per window lays
// the rows out in the window's order (WindowLayout: sorted, unless the planner found the
// input already in that order) and fills one result column. Emits the input rows in their
// input order, each with its window results appended: [input..., window 0, window 1, ...].
// Windows with the same PARTITION BY, ORDER BY and frame one after the other share a layout.
#pragma once

#include "query/binder/bound_select.h"
#include "query/execution/expression_executor.h"
#include "query/execution/physical_operator.h"
#include "query/execution/window_layout.h"

namespace argus::query {

class WindowOperator final : public PhysicalOperator {
 public:
  WindowOperator(QueryContext& ctx, PhysicalOperatorPtr child, std::vector<BoundWindow> windows, std::vector<std::string> out_names);
  bool next(DataChunk& chunk) override;
  std::string describe() const override;

 private:
  // The buffered columns of one window's expressions, by index into exprs_.
  struct Slots {
    std::vector<size_t> args, partitions, orders;
  };
  void build();
  size_t heldBytes() const;
  std::vector<const Vector*> columns(const std::vector<size_t>& slots) const;
  bool sameLayout(const BoundWindow& a, const BoundWindow& b) const;

  std::vector<BoundWindow> windows_;
  std::vector<Slots> slots_;
  std::vector<ExpressionExecutor> executors_;  // every argument and key, evaluated per input chunk
  std::vector<LogicalType> expr_types_;
  MemoryReservation memory_;

  bool built_ = false;
  std::vector<Vector> buffer_;  // the input's columns, then one per executor
  size_t rows_ = 0;
  Arena arena_;  // strings and histograms of the buffered rows and the results
  std::vector<Vector> results_;
  WindowLayout layout_;
  size_t emitted_ = 0;
};

}  // namespace argus::query
