#include "query/execution/filter.h"

namespace argus::query {

Filter::Filter(QueryContext& ctx, PhysicalOperatorPtr child, BoundExprPtr predicate)
    : PhysicalOperator(ctx), predicate_(std::move(predicate)), executor_(*predicate_) {
  names = child->names;
  types = child->types;
  children_.push_back(std::move(child));
}

bool Filter::next(DataChunk& chunk) {
  while (children_[0]->next(chunk)) {
    if (narrow(executor_, chunk, sel_)) return true;
  }
  return false;
}

bool Filter::narrow(ExpressionExecutor& predicate, DataChunk& chunk, std::vector<uint32_t>& sel) {
  const size_t n = predicate.select(chunk, sel);
  if (n == 0) return false;
  if (n == chunk.size()) return true;  // every active row passed: keep the selection as is
  chunk.sel.swap(sel);
  chunk.has_sel = true;
  return true;
}

std::string Filter::describe() const { return "FILTER " + exprText(*predicate_, children_[0]->names); }

}  // namespace argus::query
