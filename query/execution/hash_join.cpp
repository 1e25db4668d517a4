#include "query/execution/hash_join.h"

namespace argus::query {

namespace {

std::vector<LogicalType> keyTypes(const std::vector<BoundExprPtr>& keys) {
  std::vector<LogicalType> out;
  for (const BoundExprPtr& k : keys) out.push_back(k->type);
  return out;
}

std::vector<ExpressionExecutor> executors(const std::vector<BoundExprPtr>& keys) {
  std::vector<ExpressionExecutor> out;
  for (const BoundExprPtr& k : keys) out.emplace_back(*k);
  return out;
}

}  // namespace

HashJoin::HashJoin(QueryContext& ctx, PhysicalOperatorPtr left, PhysicalOperatorPtr right, JoinType type,
                   std::vector<BoundExprPtr> left_keys, std::vector<BoundExprPtr> right_keys, BoundExprPtr residual)
    : Join(ctx, std::move(left), std::move(right), type, std::move(residual), "JOIN"),
      left_keys_(std::move(left_keys)),
      right_keys_(std::move(right_keys)),
      left_exec_(executors(left_keys_)),
      right_exec_(executors(right_keys_)),
      table_(keyTypes(right_keys_)) {}

void HashJoin::evaluateKeys(std::vector<ExpressionExecutor>& execs, const DataChunk& chunk) {
  const size_t n = chunk.size();
  keys_.clear();
  has_null_.assign(n, 0);
  for (ExpressionExecutor& e : execs) {
    const Vector& v = e.evaluate(chunk);
    keys_.push_back(&v);
    if (v.allValid()) continue;
    for (size_t i = 0; i < n; ++i) has_null_[i] |= !v.isValid(i);
  }
}

void HashJoin::addRight(const DataChunk& chunk, size_t first_row) {
  evaluateKeys(right_exec_, chunk);
  const size_t n = chunk.size();
  table_.findOrAdd(keys_, n, groups_);
  head_.resize(table_.size(), kEnd);
  tail_.resize(table_.size(), kEnd);
  next_.resize(first_row + n, kEnd);
  for (size_t i = 0; i < n; ++i) {
    if (has_null_[i]) continue;
    const uint32_t g = groups_[i], row = static_cast<uint32_t>(first_row + i);
    if (head_[g] == kEnd) {
      head_[g] = row;
    } else {
      next_[tail_[g]] = row;
    }
    tail_[g] = row;
  }
}

size_t HashJoin::indexBytes() const {
  return table_.memoryBytes() + (head_.capacity() + tail_.capacity() + next_.capacity() + groups_.capacity()) * sizeof(uint32_t);
}

void HashJoin::startLeft() {
  evaluateKeys(left_exec_, left_);
  table_.find(keys_, left_.size(), groups_);
  probe_row_ = 0;
  chain_ = kEnd;
}

bool HashJoin::nextPairs(size_t room) {
  for (;;) {
    for (; chain_ != kEnd && pair_left_.size() < room; chain_ = next_[chain_]) {
      pair_left_.push_back(static_cast<uint32_t>(probe_row_ - 1));
      pair_right_.push_back(chain_);
    }
    if (chain_ != kEnd) return true;  // the batch is full
    if (probe_row_ >= groups_.size()) return false;
    const uint32_t g = groups_[probe_row_];
    chain_ = g == GroupTable::kNoGroup || has_null_[probe_row_] ? kEnd : head_[g];
    ++probe_row_;
  }
}

std::string HashJoin::describe() const {
  // Keys print with the join's (qualified) column names.
  const std::vector<std::string> right_names(names.begin() + static_cast<ptrdiff_t>(children_[0]->names.size()), names.end());
  std::string keys;
  for (size_t i = 0; i < left_keys_.size(); ++i) {
    keys += (i ? ", " : "") + exprText(*left_keys_[i], names) + " = " + exprText(*right_keys_[i], right_names);
  }
  return describeJoin("HASH_JOIN", keys);
}

}  // namespace argus::query
