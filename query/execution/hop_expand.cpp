#include "query/execution/hop_expand.h"

#include "query/function/function_registry.h"

namespace argus::query {

HopExpand::HopExpand(QueryContext& ctx, PhysicalOperatorPtr child, BoundExprPtr step, int64_t size, int64_t slide, std::string name)
    : PhysicalOperator(ctx), step_(std::move(step)), size_(size), slide_(slide), executor_(*step_) {
  names = child->names;
  types = child->types;
  names.push_back(std::move(name));
  types.push_back(LogicalType::kBigInt);
  children_.push_back(std::move(child));
}

bool HopExpand::produce(DataChunk& out) {
  const size_t width = children_[0]->types.size();
  const int64_t copies = size_ / slide_;
  for (;;) {
    if (steps_ == nullptr || row_ >= in_.size()) {
      if (!children_[0]->next(in_)) return false;
      ctx_.check();
      steps_ = &executor_.evaluate(in_);
      row_ = 0;
      copy_ = 0;
    }
    out.reset(width + 1);
    Vector& start = out.columns[width];
    start.reset(LogicalType::kBigInt, kVectorSize);
    sel_.clear();
    while (row_ < in_.size() && sel_.size() < kVectorSize) {
      const size_t i = sel_.size();
      sel_.push_back(in_.has_sel ? in_.sel[row_] : static_cast<uint32_t>(row_));
      if (!steps_->isValid(row_)) {
        start.setNull(i);
        ++row_;
        continue;
      }
      // The last window holding the step starts at floor(step / slide) * slide; the others
      // start one slide apart before it.
      int64_t last = 0;
      const int64_t step = at<int64_t>(*steps_, row_);
      if (!stepWindowStart(step, slide_, &last) || __builtin_mul_overflow(copy_, slide_, &start.i64[i]) ||
          __builtin_sub_overflow(last, start.i64[i], &start.i64[i])) {
        throw ExecutionError(step_->pos, "hop() window of step " + std::to_string(step) + " is out of range");
      }
      if (++copy_ == copies) {
        copy_ = 0;
        ++row_;
      }
    }
    if (sel_.empty()) continue;
    start.i64.resize(sel_.size());
    if (!start.validity.empty()) start.validity.resize(sel_.size());
    for (size_t c = 0; c < width; ++c) gather(in_.columns[c], sel_.data(), sel_.size(), out.columns[c]);
    out.rows = sel_.size();
    return true;
  }
}

std::string HopExpand::describe() const {
  return "HOP_EXPAND " + names.back() + " = hop(" + exprText(*step_, children_[0]->names) + ", " + std::to_string(size_) + ", " + std::to_string(slide_) + ")";
}

}  // namespace argus::query
