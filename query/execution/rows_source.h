// RowsSource: rows a table function computed up front (a listing), or computes when the
// query first asks for them (a diagnosis stage: not for EXPLAIN), handed out in chunks of
// kVectorSize. Produces the columns `column_ids` of each row, in
// that order; the rows' memory counts against the query's cap.
#pragma once

#include <functional>

#include "query/execution/physical_operator.h"
#include "query/common/value.h"

namespace argus::query {

class RowsSource final : public PhysicalOperator {
 public:
  // rows[r][c] has type types[c] or is NULL.
  RowsSource(QueryContext& ctx, std::string label, const std::vector<std::string>& names, const std::vector<LogicalType>& types,
             std::vector<std::vector<Value>> rows, const std::vector<size_t>& column_ids);
  // The rows come from compute() at the first produce(); it calls ctx.check() as it goes.
  using Compute = std::function<std::vector<std::vector<Value>>()>;
  RowsSource(QueryContext& ctx, std::string label, const std::vector<std::string>& names, const std::vector<LogicalType>& types, Compute compute,
             const std::vector<size_t>& column_ids);
  bool produce(DataChunk& chunk) override;
  std::string describe() const override;

 private:
  std::string label_;
  void setRows(std::vector<std::vector<Value>> rows);

  Compute compute_;  // null once the rows are there
  std::vector<std::vector<Value>> rows_;
  std::vector<size_t> column_ids_;
  size_t next_row_ = 0;
  MemoryReservation memory_;
};

}  // namespace argus::query
