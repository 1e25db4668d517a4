// RowsSource: rows a table function computed up front (a listing, a handful of findings),
// handed out in chunks of kVectorSize. Produces the columns `column_ids` of each row, in
// that order; the rows' memory counts against the query's cap.
#pragma once

#include "query/execution/physical_operator.h"
#include "query/common/value.h"

namespace argus::query {

class RowsSource final : public PhysicalOperator {
 public:
  // rows[r][c] has type types[c] or is NULL.
  RowsSource(QueryContext& ctx, std::string label, const std::vector<std::string>& names, const std::vector<LogicalType>& types,
             std::vector<std::vector<Value>> rows, const std::vector<size_t>& column_ids);
  bool produce(DataChunk& chunk) override;
  std::string describe() const override;

 private:
  std::string label_;
  std::vector<std::vector<Value>> rows_;
  std::vector<size_t> column_ids_;
  size_t next_row_ = 0;
  MemoryReservation memory_;
};

}  // namespace argus::query
