#include "query/execution/limit.h"

namespace argus::query {

Limit::Limit(QueryContext& ctx, PhysicalOperatorPtr child, int64_t limit, int64_t offset)
    : PhysicalOperator(ctx),
      limit_(limit),
      offset_(offset),
      skip_left_(static_cast<uint64_t>(offset)),
      take_left_(limit < 0 ? UINT64_MAX : static_cast<uint64_t>(limit)) {
  names = child->names;
  types = child->types;
  children_.push_back(std::move(child));
}

bool Limit::produce(DataChunk& chunk) {
  while (take_left_ > 0 && children_[0]->next(chunk)) {
    size_t n = chunk.size();
    size_t skip = static_cast<size_t>(std::min<uint64_t>(skip_left_, n));
    skip_left_ -= skip;
    size_t take = static_cast<size_t>(std::min<uint64_t>(take_left_, n - skip));
    if (take == 0) continue;
    take_left_ -= take;
    if (skip == 0 && take == n) return true;
    sel_.resize(take);
    for (size_t i = 0; i < take; ++i) sel_[i] = chunk.has_sel ? chunk.sel[skip + i] : static_cast<uint32_t>(skip + i);
    chunk.sel.swap(sel_);
    chunk.has_sel = true;
    return true;
  }
  return false;
}

std::string Limit::describe() const {
  std::string out = "LIMIT " + (limit_ < 0 ? std::string("all") : std::to_string(limit_));
  if (offset_ > 0) out += " OFFSET " + std::to_string(offset_);
  return out;
}

}  // namespace argus::query
