#include "query/execution/nested_loop_join.h"

#include <algorithm>

namespace argus::query {

NestedLoopJoin::NestedLoopJoin(QueryContext& ctx, PhysicalOperatorPtr left, PhysicalOperatorPtr right, JoinType type, BoundExprPtr residual)
    : Join(ctx, std::move(left), std::move(right), type, std::move(residual), "JOIN") {}

void NestedLoopJoin::startLeft() {
  left_row_ = 0;
  right_row_ = 0;
}

bool NestedLoopJoin::nextPairs(size_t room) {
  if (right_rows_ == 0) return false;
  const size_t left_rows = left_.size();
  while (left_row_ < left_rows && pair_left_.size() < room) {
    const size_t n = std::min(room - pair_left_.size(), right_rows_ - right_row_);
    for (size_t i = 0; i < n; ++i) {
      pair_left_.push_back(static_cast<uint32_t>(left_row_));
      pair_right_.push_back(static_cast<uint32_t>(right_row_ + i));
    }
    right_row_ += n;
    if (right_row_ == right_rows_) {
      right_row_ = 0;
      ++left_row_;
    }
  }
  return left_row_ < left_rows;
}

std::string NestedLoopJoin::describe() const {
  return describeJoin("NESTED_LOOP_JOIN", "");
}

}  // namespace argus::query
