#include "storage/parallel_scan_cursor.h"

#include <exception>
#include <utility>

namespace argus::storage {

ParallelScanCursor::ParallelScanCursor(std::unique_ptr<ScanParts> parts, size_t depth)
    : parts_(std::move(parts)), stripes_(parts_->stripes()), batch_rows_(parts_->batchRows()), depth_(depth == 0 ? 1 : depth) {
  for (size_t w = 0; w < parts_->size(); ++w) {
    auto worker = std::make_unique<Worker>();
    worker->part = &parts_->part(w);
    workers_.push_back(std::move(worker));
  }
  if (parts_->size() > 0) stats_.plan_bytes = parts_->part(0).stats().plan_bytes;  // one plan, shared
  for (size_t w = 0; w < workers_.size(); ++w) {
    workers_[w]->lent = loans_.tryLend([this, w] { run(w); });
    if (!workers_[w]->lent) break;  // no idle worker: the reader reads the rest itself
  }
}

ParallelScanCursor::~ParallelScanCursor() { stopWorkers(); }

void ParallelScanCursor::stopWorkers() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  for (auto& w : workers_) w->room_ready.notify_all();
  loans_.waitAll();
}

void ParallelScanCursor::run(size_t w) {
  try {
    runStripes(w);
  } catch (const std::exception& e) {  // bad_alloc outside a batch: the reader gets it in turn
    std::lock_guard lock(mu_);
    Item item;
    item.stripe_end = true;
    item.error = Status::resourceExhausted(std::string("scan: ") + e.what());
    workers_[w]->ready.push_back(std::move(item));
  }
  workers_[w]->item_ready.notify_all();
}

bool ParallelScanCursor::fill(Worker& me, Item* item) {
  if (!me.in_stripe) {
    if (!me.part->nextStripe()) return false;
    me.in_stripe = true;
  }
  bool has_rows = false;
  try {
    item->error = me.part->next(&item->batch, &has_rows);
  } catch (const std::exception& e) {  // bad_alloc: the reader gets it as an error
    item->error = Status::resourceExhausted(std::string("scan: ") + e.what());
  }
  item->stats = me.part->stats();
  if (!item->error.isOk() || !has_rows) {
    item->stripe_end = true;
    me.in_stripe = false;
  }
  return true;
}

void ParallelScanCursor::runStripes(size_t w) {
  Worker& me = *workers_[w];
  for (;;) {
    Item item;
    {
      std::lock_guard lock(mu_);
      if (stop_) return;
      item.batch = takeSpare(me);
    }
    if (!fill(me, &item)) return;
    const bool failed = !item.error.isOk();
    // Waits for room in this worker's queue, then queues the item.
    std::unique_lock lock(mu_);
    me.worker_waits = true;
    me.room_ready.wait(lock, [&] { return me.ready.size() < depth_ || stop_; });
    me.worker_waits = false;
    if (stop_) return;
    me.ready.push_back(std::move(item));
    const bool wake = me.reader_waits;
    lock.unlock();
    if (wake) me.item_ready.notify_one();
    if (failed) return;
  }
}

ColumnBatch ParallelScanCursor::takeSpare(Worker& w) {
  if (w.spare.empty()) return {};
  ColumnBatch b = std::move(w.spare.back());
  w.spare.pop_back();
  return b;
}

Status ParallelScanCursor::next(ColumnBatch* batch, bool* has_rows) {
  // Stripes end in short batches: whole batches are joined while they fit in one, so the
  // operators see full batches rather than a short one per stripe.
  size_t filled = 0;
  while (!failed_ && stripe_ix_ < stripes_ && filled < batch_rows_) {
    Worker& w = *workers_[stripe_ix_ % workers_.size()];
    std::unique_lock lock(mu_);
    if (!w.lent && w.ready.empty()) {  // no worker runs its part: the reader reads it here
      Item item;
      item.batch = takeSpare(w);
      lock.unlock();
      if (!fill(w, &item)) {  // BUG guard: the reader asks a part only for stripes it was dealt
        item.stripe_end = true;
        item.error = Status::corruption("scan: a part ran out of stripes before its last");
      }
      lock.lock();
      w.ready.push_back(std::move(item));
    }
    w.reader_waits = true;
    w.item_ready.wait(lock, [&] { return !w.ready.empty(); });
    w.reader_waits = false;
    Item& item = w.ready.front();
    if (!item.stripe_end && filled > 0 && filled + item.batch.rows > batch_rows_) break;  // the next call's
    // Stats: this worker's new total replaces what it had contributed.
    stats_.chunks_read += item.stats.chunks_read - w.taken.chunks_read;
    stats_.chunks_skipped += item.stats.chunks_skipped - w.taken.chunks_skipped;
    stats_.head_rows_read += item.stats.head_rows_read - w.taken.head_rows_read;
    stats_.head_entries_read += item.stats.head_entries_read - w.taken.head_entries_read;
    w.taken = item.stats;
    Status error;
    if (item.stripe_end) {
      error = std::move(item.error);
      ++stripe_ix_;
    } else if (filled == 0) {
      std::swap(*batch, item.batch);
      filled = batch->rows;
    } else {
      append(item.batch, batch);
      filled = batch->rows;
    }
    // Buffers go round again, a stripe end's too: its batch holds no rows but may hold spare
    // histograms (HistColumn), whose buffers are freed if it is dropped here.
    w.spare.push_back(std::move(item.batch));
    w.ready.pop_front();
    const bool wake = w.worker_waits;
    lock.unlock();
    if (wake) w.room_ready.notify_one();
    if (!error.isOk()) {
      failed_ = true;
      return error;
    }
  }
  *has_rows = filled > 0;
  if (filled == 0) batch->clear();
  return Status::ok();
}

void ParallelScanCursor::append(ColumnBatch& from, ColumnBatch* to) {
  for (size_t o = 0; o < to->columns.size(); ++o) {
    Column& src = from.columns[o];
    Column& dst = to->columns[o];
    if (dst.type == ColumnType::kHistogram) {
      dst.hists.takeFrom(src.hists, 0, src.hists.size());
    } else {
      dst.ints.insert(dst.ints.end(), src.ints.begin(), src.ints.end());
    }
  }
  to->rows += from.rows;
}

}  // namespace argus::storage
