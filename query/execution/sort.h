// Sort: ORDER BY, and with a limit the top-N (ORDER BY ... LIMIT n [OFFSET m]). Buffers its
// input's rows column-wise (strings and histograms copied into its arena), then sorts row
// indices by keys encoded as order-preserving 64-bit codes (NULLs first or last per key;
// VARCHAR by rank), stable, so ties keep their input order. The top-N variant keeps at most
// about 2 x (n + m) rows: whenever the buffer passes that, it sorts and truncates.
#pragma once

#include "query/binder/bound_select.h"
#include "query/execution/physical_operator.h"

namespace argus::query {

class Sort final : public PhysicalOperator {
 public:
  // limit -1: sort everything.
  Sort(QueryContext& ctx, PhysicalOperatorPtr child, std::vector<OrderKey> keys, int64_t limit, int64_t offset);
  bool produce(DataChunk& chunk) override;
  std::string describe() const override;

 private:
  void consume();
  // The buffered rows' indices in output order, the first min(keep, rows) of them.
  std::vector<uint32_t> sortedOrder(size_t keep) const;
  void compact(size_t keep);

  std::vector<OrderKey> keys_;
  int64_t limit_;
  int64_t offset_;
  MemoryReservation memory_;
  std::vector<Vector> buffer_;
  size_t rows_ = 0;
  Arena arena_;
  bool consumed_ = false;
  std::vector<uint32_t> order_;
  size_t emit_pos_ = 0;
  size_t emit_end_ = 0;
};

}  // namespace argus::query
