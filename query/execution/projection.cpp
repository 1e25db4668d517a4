#include "query/execution/projection.h"

#include <utility>

namespace argus::query {

Projection::Projection(QueryContext& ctx, PhysicalOperatorPtr child, std::vector<BoundExprPtr> exprs, std::vector<std::string> out_names)
    : PhysicalOperator(ctx), exprs_(std::move(exprs)) {
  names = std::move(out_names);
  for (const auto& e : exprs_) {
    types.push_back(e->type);
    executors_.emplace_back(*e);
  }
  children_.push_back(std::move(child));
  // Every input column read by any entry, counted: a bare reference may move its column
  // only when nothing else reads it.
  std::vector<int> uses;
  for (const auto& e : exprs_) {
    visitExpr(*e, [&](const BoundExpr& node) {
      if (node.kind != BoundExprKind::kColumnRef) return;
      if (uses.size() <= node.column) uses.resize(node.column + 1, 0);
      ++uses[node.column];
    });
  }
  for (const auto& e : exprs_) moved_from_.push_back(e->kind == BoundExprKind::kColumnRef && uses[e->column] == 1 ? static_cast<int>(e->column) : -1);
}

bool Projection::produce(DataChunk& out) {
  if (!children_[0]->next(input_)) return false;
  out.reset(exprs_.size());
  out.rows = input_.size();
  out.order = input_.order;
  const bool dense = input_.selData() == nullptr;  // else a column reference gathers its rows
  for (size_t i = 0; i < executors_.size(); ++i) {
    if (dense && moved_from_[i] >= 0) continue;
    const Vector& v = executors_[i].evaluate(input_);
    out.columns[i] = v;  // copy-assign reuses out's buffers
  }
  // The input's buffers come back at the child's next fill of input_.
  if (dense) {
    for (size_t i = 0; i < executors_.size(); ++i) {
      if (moved_from_[i] >= 0) std::swap(out.columns[i], input_.columns[static_cast<size_t>(moved_from_[i])]);
    }
  }
  return true;
}

std::vector<PhysicalOperatorPtr> Projection::split(size_t threads, SplitOrder order) {
  std::vector<PhysicalOperatorPtr> parts = children_[0]->split(threads, order);
  for (auto& p : parts) {
    std::vector<BoundExprPtr> exprs;
    for (const auto& e : exprs_) exprs.push_back(copyExpr(*e));
    p = countedAsThis(std::make_unique<Projection>(ctx_, std::move(p), std::move(exprs), names));
  }
  return parts;
}

std::string Projection::describe() const {
  std::string out = "PROJECTION [";
  for (size_t i = 0; i < exprs_.size(); ++i) out += (i ? ", " : "") + exprText(*exprs_[i], children_[0]->names);
  return out + "]";
}

}  // namespace argus::query
