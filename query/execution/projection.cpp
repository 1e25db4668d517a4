#include "query/execution/projection.h"

namespace argus::query {

Projection::Projection(QueryContext& ctx, PhysicalOperatorPtr child, std::vector<BoundExprPtr> exprs, std::vector<std::string> out_names)
    : PhysicalOperator(ctx), exprs_(std::move(exprs)) {
  names = std::move(out_names);
  for (const auto& e : exprs_) {
    types.push_back(e->type);
    executors_.emplace_back(*e);
  }
  children_.push_back(std::move(child));
}

bool Projection::next(DataChunk& out) {
  if (!children_[0]->next(input_)) return false;
  out.reset(exprs_.size());
  out.rows = input_.size();
  out.order = input_.order;
  for (size_t i = 0; i < executors_.size(); ++i) {
    const Vector& v = executors_[i].evaluate(input_);
    out.columns[i] = v;  // copy-assign reuses out's buffers
  }
  return true;
}

std::vector<PhysicalOperatorPtr> Projection::split(size_t threads) {
  std::vector<PhysicalOperatorPtr> parts = children_[0]->split(threads);
  for (auto& p : parts) {
    std::vector<BoundExprPtr> exprs;
    for (const auto& e : exprs_) exprs.push_back(copyExpr(*e));
    p = std::make_unique<Projection>(ctx_, std::move(p), std::move(exprs), names);
  }
  return parts;
}

std::string Projection::describe() const {
  std::string out = "PROJECTION [";
  for (size_t i = 0; i < exprs_.size(); ++i) out += (i ? ", " : "") + exprText(*exprs_[i], children_[0]->names);
  return out + "]";
}

}  // namespace argus::query
