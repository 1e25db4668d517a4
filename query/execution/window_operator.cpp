#include "query/execution/window_operator.h"

#include <algorithm>

namespace argus::query {

WindowOperator::WindowOperator(QueryContext& ctx, PhysicalOperatorPtr child, std::vector<BoundWindow> windows, std::vector<std::string> out_names)
    : PhysicalOperator(ctx), windows_(std::move(windows)), memory_(ctx, "a window function") {
  names = std::move(out_names);
  types = child->types;
  auto slot = [&](const BoundExprPtr& e) {
    executors_.emplace_back(*e);
    expr_types_.push_back(e->type);
    return executors_.size() - 1;
  };
  for (const BoundWindow& w : windows_) {
    types.push_back(w.call.type);
    Slots s;
    for (const auto& e : w.args) s.args.push_back(slot(e));
    for (const auto& e : w.partitions) s.partitions.push_back(slot(e));
    for (const auto& e : w.orders) s.orders.push_back(slot(e));
    slots_.push_back(std::move(s));
  }
  children_.push_back(std::move(child));
}

std::vector<const Vector*> WindowOperator::columns(const std::vector<size_t>& slots) const {
  const size_t base = children_[0]->types.size();
  std::vector<const Vector*> out;
  for (size_t s : slots) out.push_back(&buffer_[base + s]);
  return out;
}

size_t WindowOperator::heldBytes() const {
  size_t bytes = arena_.bytes() + layout_.memoryBytes();
  for (const Vector& v : buffer_) bytes += memoryBytes(v);
  for (const Vector& v : results_) bytes += memoryBytes(v);
  return bytes;
}

bool WindowOperator::sameLayout(const BoundWindow& a, const BoundWindow& b) const {
  auto same = [](const std::vector<BoundExprPtr>& x, const std::vector<BoundExprPtr>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!sameExpr(*x[i], *y[i])) return false;
    }
    return true;
  };
  auto sameBound = [](const FrameBound& x, const FrameBound& y) { return x.kind == y.kind && x.offset == y.offset; };
  return same(a.partitions, b.partitions) && same(a.orders, b.orders) && a.desc == b.desc && a.nulls_first == b.nulls_first &&
         a.presorted == b.presorted && a.frame.unit == b.frame.unit && sameBound(a.frame.start, b.frame.start) && sameBound(a.frame.end, b.frame.end);
}

void WindowOperator::build() {
  built_ = true;
  const size_t width = children_[0]->types.size();
  buffer_.resize(width + executors_.size());
  for (size_t c = 0; c < width; ++c) buffer_[c].reset(children_[0]->types[c], 0);
  for (size_t k = 0; k < executors_.size(); ++k) buffer_[width + k].reset(expr_types_[k], 0);
  DataChunk in;
  while (children_[0]->next(in)) {
    ctx_.check();
    const size_t n = in.size();
    if (n == 0) continue;
    for (size_t c = 0; c < width; ++c) append(in.columns[c], in.selData(), n, buffer_[c], arena_);
    for (size_t k = 0; k < executors_.size(); ++k) {
      append(executors_[k].evaluate(in), nullptr, n, buffer_[width + k], arena_);  // dense over the active rows
    }
    rows_ += n;
    memory_.set(heldBytes());
  }
  results_.resize(windows_.size());
  for (size_t i = 0; i < windows_.size(); ++i) {
    const BoundWindow& w = windows_[i];
    const Slots& s = slots_[i];
    if (i == 0 || !sameLayout(w, windows_[i - 1])) {
      ctx_.check();
      WindowKeys keys{columns(s.partitions), columns(s.orders), w.desc, w.nulls_first};
      buildWindowLayout(keys, w.frame, w.presorted, rows_, &layout_);
    }
    std::vector<LogicalType> arg_types;
    for (const auto& a : w.args) arg_types.push_back(a->type);
    makeWindowFunction(w.call, arg_types)->evaluate(layout_, columns(s.args), results_[i], arena_, ctx_);
    memory_.set(heldBytes());
  }
}

bool WindowOperator::next(DataChunk& out) {
  if (!built_) build();
  if (emitted_ >= rows_) return false;
  ctx_.check();
  const size_t n = std::min(kVectorSize, rows_ - emitted_);
  const size_t width = children_[0]->types.size();
  out.reset(width + results_.size());
  out.rows = n;
  for (size_t c = 0; c < width; ++c) slice(buffer_[c], emitted_, n, out.columns[c]);
  for (size_t i = 0; i < results_.size(); ++i) slice(results_[i], emitted_, n, out.columns[width + i]);
  emitted_ += n;
  return true;
}

std::string WindowOperator::describe() const {
  std::string out = "WINDOW [";
  for (size_t i = 0; i < windows_.size(); ++i) out += (i ? ", " : "") + windows_[i].text + (windows_[i].presorted ? " presorted" : " sorted");
  return out + "]";
}

}  // namespace argus::query
