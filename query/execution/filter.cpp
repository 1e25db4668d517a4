#include "query/execution/filter.h"

namespace argus::query {

Filter::Filter(QueryContext& ctx, PhysicalOperatorPtr child, BoundExprPtr predicate)
    : PhysicalOperator(ctx), predicate_(std::move(predicate)), executor_(*predicate_) {
  names = child->names;
  types = child->types;
  children_.push_back(std::move(child));
}

bool Filter::produce(DataChunk& chunk) {
  while (children_[0]->next(chunk)) {
    const size_t n = executor_.select(chunk, sel_);
    if (n == 0) continue;
    if (n == chunk.size()) return true;  // every active row passed: keep the selection as is
    chunk.sel.swap(sel_);
    chunk.has_sel = true;
    return true;
  }
  return false;
}

std::vector<PhysicalOperatorPtr> Filter::split(size_t threads, SplitOrder order) {
  std::vector<PhysicalOperatorPtr> parts = children_[0]->split(threads, order);
  for (auto& p : parts) p = countedAsThis(std::make_unique<Filter>(ctx_, std::move(p), copyExpr(*predicate_)));
  return parts;
}

std::string Filter::describe() const { return "FILTER " + exprText(*predicate_, children_[0]->names); }

}  // namespace argus::query
