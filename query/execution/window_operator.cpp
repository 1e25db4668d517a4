#include "query/execution/window_operator.h"

#include <algorithm>
#include <numeric>

#include "query/execution/filter.h"
#include "query/execution/sort_key.h"
#include "query/execution/table_scan.h"

namespace argus::query {

WindowOperator::WindowOperator(QueryContext& ctx, PhysicalOperatorPtr child, std::vector<BoundWindow> windows, std::vector<std::string> out_names)
    : PhysicalOperator(ctx), windows_(std::move(windows)), memory_(ctx, "a window function") {
  names = std::move(out_names);
  types = child->types;
  const size_t width = child->types.size();
  // A bare column is read where the input's columns are buffered; anything else is
  // evaluated into a buffered column of its own (a copy of each key and argument per row
  // was a third of a rolling median's copying).
  auto slot = [&](const BoundExprPtr& e) {
    if (e->kind == BoundExprKind::kColumnRef && e->column < width) return e->column;
    executors_.emplace_back(*e);
    expr_types_.push_back(e->type);
    return width + executors_.size() - 1;
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
  streaming_ = !windows_.empty() && !windows_[0].partitions.empty();
  for (const BoundWindow& w : windows_) {
    streaming_ = streaming_ && w.presorted && sameExprs(w.partitions, windows_[0].partitions);
  }
}

std::vector<const Vector*> WindowOperator::columns(const std::vector<size_t>& slots) const {
  std::vector<const Vector*> out;
  for (size_t s : slots) out.push_back(&buffer_[s]);
  return out;
}

size_t WindowOperator::heldBytes() const {
  size_t bytes = arena_.bytes() + layout_.memoryBytes();
  for (const Vector& v : buffer_) bytes += memoryBytes(v);
  for (const Vector& v : results_) bytes += memoryBytes(v);
  return bytes;
}

bool WindowOperator::sameLayout(const BoundWindow& a, const BoundWindow& b) const {
  auto sameBound = [](const FrameBound& x, const FrameBound& y) { return x.kind == y.kind && x.offset == y.offset; };
  return sameExprs(a.partitions, b.partitions) && sameExprs(a.orders, b.orders) && a.desc == b.desc && a.nulls_first == b.nulls_first &&
         a.presorted == b.presorted && a.frame.unit == b.frame.unit && sameBound(a.frame.start, b.frame.start) && sameBound(a.frame.end, b.frame.end);
}

void WindowOperator::readInput(size_t until) {
  const size_t width = children_[0]->types.size();
  if (buffer_.empty()) {
    buffer_.resize(width + executors_.size());
    for (size_t c = 0; c < width; ++c) buffer_[c].reset(children_[0]->types[c], 0);
    for (size_t k = 0; k < executors_.size(); ++k) buffer_[width + k].reset(expr_types_[k], 0);
  }
  DataChunk in;
  while (rows_ < until && !input_done_) {
    if (!children_[0]->next(in)) {
      input_done_ = true;
      break;
    }
    ctx_.check();
    const size_t n = in.size();
    if (n == 0) continue;
    for (size_t c = 0; c < width; ++c) append(in.columns[c], in.selData(), n, buffer_[c], arena_);
    for (size_t k = 0; k < executors_.size(); ++k) {
      append(executors_[k].evaluate(in), nullptr, n, buffer_[width + k], arena_);  // dense over the active rows
    }
    if (keep_order_) row_order_.insert(row_order_.end(), n, in.order);
    rows_ += n;
    memory_.set(heldBytes());
  }
}

size_t WindowOperator::lastPartitionStart() const {
  // Back from the last row to the first whose keys differ from the row before it: the last
  // partition is short next to a batch, and the rows' values compare as their sort codes
  // would, so nothing is encoded (encoding every row's keys cost ~40 instructions a row).
  const std::vector<const Vector*> partitions = columns(slots_[0].partitions);
  for (size_t r = rows_; r-- > 1;) {
    for (const Vector* v : partitions) {
      if (!sameSortKey(*v, r - 1, r)) return r;
    }
  }
  return 0;
}

void WindowOperator::computeWindows(size_t rows) {
  results_.resize(windows_.size());  // each function resets its vector, keeping its capacity
  for (size_t i = 0; i < windows_.size(); ++i) {
    const BoundWindow& w = windows_[i];
    const Slots& s = slots_[i];
    if (i == 0 || !sameLayout(w, windows_[i - 1])) {
      ctx_.check();
      bool peers = false;  // whether a function of this layout reads them
      for (size_t j = i; j < windows_.size() && (j == i || sameLayout(windows_[j], windows_[j - 1])); ++j) peers = peers || readsPeers(windows_[j].call);
      WindowKeys keys{columns(s.partitions), columns(s.orders), w.desc, w.nulls_first};
      buildWindowLayout(keys, w.frame, w.presorted, peers, rows, &layout_);
    }
    std::vector<LogicalType> arg_types;
    for (const auto& a : w.args) arg_types.push_back(a->type);
    makeWindowFunction(w.call, arg_types)->evaluate(layout_, columns(s.args), results_[i], arena_, ctx_);
    memory_.set(heldBytes());
  }
}

void WindowOperator::dropEmitted() {
  // The rows not emitted yet move to the front. Numbers move in place, in buffers that keep
  // their capacity (fresh vectors regrew every batch: a third of a rolling median's time);
  // strings and histograms are copied into a fresh arena, which frees the emitted rows'.
  const size_t keep = rows_ - ready_;
  std::vector<uint32_t> rest;
  Arena arena;
  for (Vector& v : buffer_) {
    if (v.type != LogicalType::kVarchar && v.type != LogicalType::kHistogram) {
      eraseFront(v, ready_);
      continue;
    }
    if (rest.size() != keep) {
      rest.resize(keep);
      std::iota(rest.begin(), rest.end(), static_cast<uint32_t>(ready_));
    }
    Vector kept;
    kept.reset(v.type, 0);
    append(v, rest.data(), keep, kept, arena);
    v = std::move(kept);
  }
  arena_ = std::move(arena);
  if (keep_order_) row_order_.erase(row_order_.begin(), row_order_.begin() + static_cast<ptrdiff_t>(ready_));
  rows_ = keep;
  ready_ = emitted_ = 0;
  memory_.set(heldBytes());
}

bool WindowOperator::produce(DataChunk& out) {
  // A batch of rows worth computing windows for; doubled while one partition fills it.
  constexpr size_t kStreamBatch = 16 * kVectorSize;
  while (emitted_ >= ready_) {
    if (ready_ > 0) dropEmitted();
    if (input_done_ && rows_ == 0) return false;
    size_t want = streaming_ ? std::max(kStreamBatch, 2 * rows_) : SIZE_MAX;
    readInput(want);
    ready_ = input_done_ ? rows_ : lastPartitionStart();
    if (ready_ == 0 && !input_done_) continue;  // one partition so far: read more
    computeWindows(ready_);
  }
  ctx_.check();
  size_t n = std::min(kVectorSize, ready_ - emitted_);
  const size_t width = children_[0]->types.size();
  out.reset(width + results_.size());
  if (keep_order_) {  // one order per chunk
    out.order = row_order_[emitted_];
    n = static_cast<size_t>(std::find_if(row_order_.begin() + static_cast<ptrdiff_t>(emitted_), row_order_.begin() + static_cast<ptrdiff_t>(emitted_ + n),
                                         [&](uint64_t o) { return o != out.order; }) -
                            (row_order_.begin() + static_cast<ptrdiff_t>(emitted_)));
  }
  out.rows = n;
  for (size_t c = 0; c < width; ++c) slice(buffer_[c], emitted_, n, out.columns[c]);
  for (size_t i = 0; i < results_.size(); ++i) slice(results_[i], emitted_, n, out.columns[width + i]);
  emitted_ += n;
  return true;
}

bool WindowOperator::partitionsWithinParts() const {
  if (!streaming_) return false;
  const PhysicalOperator* input = children_[0].get();
  while (dynamic_cast<const Filter*>(input) != nullptr) input = input->children()[0].get();
  if (dynamic_cast<const TableScan*>(input) == nullptr) return false;
  // Below here only filters, which keep the scan's columns: names are the table's.
  for (const auto& p : windows_[0].partitions) {
    if (p->kind == BoundExprKind::kColumnRef && children_[0]->names[p->column] == "rank") return true;
  }
  return false;
}

std::vector<PhysicalOperatorPtr> WindowOperator::split(size_t threads, SplitOrder order) {
  if (!partitionsWithinParts()) return {};
  std::vector<PhysicalOperatorPtr> parts = children_[0]->split(threads, order);
  for (auto& p : parts) {
    std::vector<BoundWindow> windows;
    for (const BoundWindow& w : windows_) {
      BoundWindow c;
      c.call = w.call;
      for (const auto& e : w.args) c.args.push_back(copyExpr(*e));
      for (const auto& e : w.partitions) c.partitions.push_back(copyExpr(*e));
      for (const auto& e : w.orders) c.orders.push_back(copyExpr(*e));
      c.desc = w.desc;
      c.nulls_first = w.nulls_first;
      c.frame = w.frame;
      c.presorted = w.presorted;
      c.text = w.text;
      windows.push_back(std::move(c));
    }
    auto copy = countedAsThis(std::make_unique<WindowOperator>(ctx_, std::move(p), std::move(windows), names));
    copy->keep_order_ = true;
    p = std::move(copy);
  }
  return parts;
}

std::string WindowOperator::describe() const {
  std::string out = "WINDOW [";
  for (size_t i = 0; i < windows_.size(); ++i) out += (i ? ", " : "") + windows_[i].text + (windows_[i].presorted ? " presorted" : " sorted");
  return out + (streaming_ ? "] streaming" : "]");
}

}  // namespace argus::query
