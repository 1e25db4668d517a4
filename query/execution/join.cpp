#include "query/execution/join.h"

namespace argus::query {

Join::Join(QueryContext& ctx, PhysicalOperatorPtr left, PhysicalOperatorPtr right, JoinType type, BoundExprPtr residual, const char* what)
    : PhysicalOperator(ctx), type_(type), residual_(std::move(residual)), memory_(ctx, what) {
  if (residual_) residual_executor_ = std::make_unique<ExpressionExecutor>(*residual_);
  for (const PhysicalOperatorPtr* side : {&left, &right}) {
    names.insert(names.end(), (*side)->names.begin(), (*side)->names.end());
    types.insert(types.end(), (*side)->types.begin(), (*side)->types.end());
  }
  children_.push_back(std::move(left));
  children_.push_back(std::move(right));
}

void Join::buildRight() {
  built_ = true;
  const std::vector<LogicalType>& rt = children_[1]->types;
  right_.resize(rt.size());
  for (size_t c = 0; c < rt.size(); ++c) right_[c].reset(rt[c], 0);
  DataChunk in;
  while (children_[1]->next(in)) {
    ctx_.check();
    const size_t n = in.size();
    for (size_t c = 0; c < right_.size(); ++c) append(in.columns[c], in.selData(), n, right_[c], arena_);
    addRight(in, right_rows_);
    right_rows_ += n;
    size_t bytes = arena_.bytes() + indexBytes();
    for (const Vector& v : right_) bytes += memoryBytes(v);
    memory_.set(bytes);
  }
}

bool Join::produce(DataChunk& out) {
  if (!built_) buildRight();
  for (;;) {
    ctx_.check();
    if (!have_left_) {
      if (!children_[0]->next(left_)) return false;
      have_left_ = true;
      pairs_done_ = false;
      matched_.assign(left_.size(), 0);
      unmatched_pos_ = 0;
      startLeft();
    }
    if (!pairs_done_) {
      pair_left_.clear();
      pair_right_.clear();
      pairs_done_ = !nextPairs(kVectorSize);
      if (!pair_left_.empty() && emitPairs(out)) return true;
      continue;
    }
    if (type_ == JoinType::kLeft && emitUnmatched(out)) return true;
    have_left_ = false;
  }
}

bool Join::emitPairs(DataChunk& out) {
  const size_t n = pair_left_.size();
  const size_t lw = children_[0]->types.size();
  left_rows_.resize(n);
  for (size_t i = 0; i < n; ++i) left_rows_[i] = left_.has_sel ? left_.sel[pair_left_[i]] : pair_left_[i];
  out.reset(types.size());
  out.rows = n;
  for (size_t c = 0; c < lw; ++c) gather(left_.columns[c], left_rows_.data(), n, out.columns[c]);
  for (size_t c = 0; c < right_.size(); ++c) gather(right_[c], pair_right_.data(), n, out.columns[lw + c]);
  if (!residual_executor_) {
    for (uint32_t p : pair_left_) matched_[p] = 1;
    return true;
  }
  const size_t kept = residual_executor_->select(out, kept_);
  for (size_t i = 0; i < kept; ++i) matched_[pair_left_[kept_[i]]] = 1;
  if (kept == 0) return false;
  if (kept < n) {
    out.sel.swap(kept_);
    out.has_sel = true;
  }
  return true;
}

bool Join::emitUnmatched(DataChunk& out) {
  left_rows_.clear();
  for (; unmatched_pos_ < matched_.size() && left_rows_.size() < kVectorSize; ++unmatched_pos_) {
    if (!matched_[unmatched_pos_]) left_rows_.push_back(left_.has_sel ? left_.sel[unmatched_pos_] : static_cast<uint32_t>(unmatched_pos_));
  }
  if (left_rows_.empty()) return false;
  const size_t lw = children_[0]->types.size();
  out.reset(types.size());
  out.rows = left_rows_.size();
  for (size_t c = 0; c < lw; ++c) gather(left_.columns[c], left_rows_.data(), left_rows_.size(), out.columns[c]);
  for (size_t c = 0; c < right_.size(); ++c) out.columns[lw + c].setConstantNull(right_[c].type);
  return true;
}

std::string Join::describeJoin(const char* op, const std::string& keys) const {
  static constexpr const char* kTypeNames[] = {"INNER", "LEFT", "CROSS"};
  std::string out = std::string(op) + " " + kTypeNames[static_cast<int>(type_)];
  if (!keys.empty()) out += " [" + keys + "]";
  if (residual_) out += " residual " + exprText(*residual_, names);
  return out;
}

}  // namespace argus::query
