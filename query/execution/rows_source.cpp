#include "query/execution/rows_source.h"

#include <algorithm>
#include <utility>

namespace argus::query {

RowsSource::RowsSource(QueryContext& ctx, std::string label, const std::vector<std::string>& names, const std::vector<LogicalType>& types,
                       std::vector<std::vector<Value>> rows, const std::vector<size_t>& column_ids)
    : PhysicalOperator(ctx),
      label_(std::move(label)),
      column_ids_(column_ids),
      memory_(ctx, "table function rows") {
  for (size_t id : column_ids_) {
    this->names.push_back(names[id]);
    this->types.push_back(types[id]);
  }
  setRows(std::move(rows));
}

RowsSource::RowsSource(QueryContext& ctx, std::string label, const std::vector<std::string>& names, const std::vector<LogicalType>& types, Compute compute,
                       const std::vector<size_t>& column_ids)
    : RowsSource(ctx, std::move(label), names, types, std::vector<std::vector<Value>>{}, column_ids) {
  compute_ = std::move(compute);
}

void RowsSource::setRows(std::vector<std::vector<Value>> rows) {
  rows_ = std::move(rows);
  size_t bytes = 0;
  for (const auto& row : rows_) {
    for (const Value& v : row) bytes += sizeof(Value) + v.stringValue().size();
  }
  memory_.set(bytes);
}

bool RowsSource::produce(DataChunk& out) {
  ctx_.check();
  if (compute_) setRows(std::exchange(compute_, nullptr)());
  if (next_row_ >= rows_.size()) return false;
  const size_t n = std::min(kVectorSize, rows_.size() - next_row_);
  out.reset(column_ids_.size());
  out.rows = n;
  for (size_t j = 0; j < column_ids_.size(); ++j) {
    Vector& v = out.columns[j];
    v.reset(types[j], n);
    for (size_t i = 0; i < n; ++i) {
      const Value& x = rows_[next_row_ + i][column_ids_[j]];
      if (x.isNull()) {
        v.setNull(i);
        continue;
      }
      switch (types[j]) {
        case LogicalType::kBoolean: v.b8[i] = x.boolValue(); break;
        case LogicalType::kBigInt:
        case LogicalType::kId: v.i64[i] = x.bigintValue(); break;
        case LogicalType::kDouble: v.f64[i] = x.doubleValue(); break;
        case LogicalType::kVarchar: v.str[i] = x.stringValue(); break;  // rows_ keeps the bytes
        case LogicalType::kHistogram:
        case LogicalType::kNull: v.setNull(i); break;
      }
    }
  }
  next_row_ += n;
  ctx_.stats().rows_scanned += n;
  return true;
}

std::string RowsSource::describe() const { return compute_ ? label_ : label_ + " rows=" + std::to_string(rows_.size()); }

}  // namespace argus::query
