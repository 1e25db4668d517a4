#include "query/execution/gather.h"

#include <utility>

#include "query/execution/table_scan.h"

namespace argus::query {
namespace {

// The chunk's strings and histograms copied into arena: the views its producer handed out
// last only until that producer's next call.
void ownViews(DataChunk& chunk, Arena& arena) {
  for (Vector& v : chunk.columns) {
    const size_t n = v.constant ? 1 : chunk.rows;
    if (v.type == LogicalType::kVarchar) {
      for (size_t i = 0; i < n && i < v.str.size(); ++i) v.str[i] = arena.copy(v.str[i]);
    } else if (v.type == LogicalType::kHistogram) {
      for (size_t i = 0; i < n && i < v.hist.size(); ++i) {
        if (v.hist[i] != nullptr) v.hist[i] = arena.copy(*v.hist[i]);
      }
    }
  }
}

}  // namespace

Gather::Gather(QueryContext& ctx, PhysicalOperatorPtr child) : PhysicalOperator(ctx) {
  names = child->names;
  types = child->types;
  children_.push_back(std::move(child));
}

Gather::~Gather() { finish(); }

void Gather::start() {
  started_ = true;
  std::vector<PhysicalOperatorPtr> ops = children_[0]->split(scanThreads(ctx_.options()), SplitOrder::kInterleaved);
  for (PhysicalOperatorPtr& op : ops) {
    auto c = std::make_unique<Copy>();
    c->op = std::move(op);
    for (Slot& s : c->slots) c->free.push_back(&s);
    copies_.push_back(std::move(c));
  }
  if (copies_.size() < 2) return;  // the reader runs a lone copy itself
  for (auto& c : copies_) {
    c->threaded = loans_.tryLend([this, copy = c.get()] { run(*copy); });
    if (!c->threaded) break;  // no idle worker: the reader runs the rest
  }
}

bool Gather::fillOne(Copy& c, std::unique_lock<std::mutex>& lock) {
  Slot* s = c.free.back();
  c.free.pop_back();
  lock.unlock();
  bool more = false;
  try {
    s->arena.clear();
    more = c.op->next(s->chunk);
    if (more) ownViews(s->chunk, s->arena);
  } catch (...) {
    lock.lock();
    c.free.push_back(s);
    throw;
  }
  lock.lock();
  if (more) {
    c.ready.push_back(s);
  } else {
    c.free.push_back(s);
    c.ended = true;
  }
  return more;
}

void Gather::run(Copy& c) {
  std::unique_lock<std::mutex> lock(mu_);
  try {
    for (;;) {
      c.has_free.wait(lock, [&] { return stop_ || c.free.size() >= kRefill; });
      if (stop_) return;
      while (!c.free.empty()) {  // fillOne leaves the lock held again
        if (stop_) return;
        const bool more = fillOne(c, lock);
        has_ready_.notify_one();
        if (!more) return;
      }
    }
  } catch (...) {  // fillOne rethrows with the lock held: the first error stops every copy
    if (!error_) error_ = std::current_exception();
    stop_ = true;
    c.ended = true;
    for (auto& other : copies_) other->has_free.notify_all();
    has_ready_.notify_one();
  }
}

bool Gather::produce(DataChunk& out) {
  if (!started_) start();
  if (copies_.empty()) return children_[0]->next(out);
  std::unique_lock<std::mutex> lock(mu_);
  if (current_ != nullptr) {
    current_copy_->free.push_back(current_);
    if (current_copy_->free.size() == kRefill) current_copy_->has_free.notify_one();  // its worker waits for this many
    current_ = nullptr;
  }
  Copy* best = nullptr;
  for (;;) {
    if (error_) std::rethrow_exception(error_);
    best = nullptr;
    Copy* unthreaded = nullptr;
    bool waiting = false;
    for (auto& c : copies_) {
      if (!c->ready.empty()) {
        if (best == nullptr || c->ready.front()->chunk.order < best->ready.front()->chunk.order) best = c.get();
      } else if (!c->ended) {
        waiting = true;
        if (!c->threaded && unthreaded == nullptr) unthreaded = c.get();
      }
    }
    if (!waiting) break;
    if (unthreaded != nullptr) {
      fillOne(*unthreaded, lock);
    } else {
      has_ready_.wait(lock);
    }
  }
  if (best == nullptr) {  // every copy ended
    lock.unlock();
    finish();
    return false;
  }
  current_ = best->ready.front();
  current_copy_ = best;
  best->ready.pop_front();
  std::swap(out, current_->chunk);  // the slot keeps out's old buffers for its next fill
  return true;
}

void Gather::stopCopies() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    for (auto& c : copies_) c->has_free.notify_all();
  }
  loans_.waitAll();
}

void Gather::finish() {
  if (finished_ || copies_.empty()) return;
  finished_ = true;
  stopCopies();
  children_[0]->finishSplit();
}

PhysicalOperatorPtr gathered(QueryContext& ctx, PhysicalOperatorPtr child) {
  if (scanThreads(ctx.options()) <= 1) return child;
  return std::make_unique<Gather>(ctx, std::move(child));
}

}  // namespace argus::query
