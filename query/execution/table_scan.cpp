#include "query/execution/table_scan.h"

#include <algorithm>

#include "base/worker_threads.h"
#include "query/common/errors.h"

namespace argus::query {

size_t scanThreads(const QueryOptions& o) { return o.scan_threads > 0 ? o.scan_threads : defaultWorkerThreads(); }

TableScan::TableScan(QueryContext& ctx, const storage::Store& store, const TableInfo& table, std::vector<size_t> column_ids,
                     ScanPredicates predicates)
    : PhysicalOperator(ctx), store_(store), table_(table), column_ids_(std::move(column_ids)), predicates_(std::move(predicates)) {
  for (size_t id : column_ids_) {
    const TableColumn& c = table_.columns[id];
    names.push_back(c.name);
    types.push_back(c.type);
    if (c.storage == nullptr) {
      batch_index_.push_back(-1);
    } else {
      batch_index_.push_back(static_cast<int>(storage_columns_.size()));
      storage_columns_.push_back(c.name);
    }
  }
  // The store returns every column for an empty list: ask for the cheapest one instead
  // (rank lives in the keys) when the query reads none (count(*), job only).
  if (storage_columns_.empty()) storage_columns_.push_back("rank");
}

TableScan::~TableScan() { finishCursor(); }

void TableScan::finishCursor() {
  if (!cursor_) return;
  const storage::ScanStats& s = cursor_->stats();
  QueryStats& q = ctx_.stats();
  q.chunks_read += s.chunks_read;
  q.chunks_skipped += s.chunks_skipped;
  q.head_rows_read += s.head_rows_read;
  cursor_.reset();
  plan_memory_.set(0);
}

void TableScan::listJobs() {
  if (jobs_listed_) return;
  jobs_listed_ = true;
  if (predicates_.contradiction()) return;
  for (const storage::JobInfo& j : store_.listJobs()) {
    if (!predicates_.jobs_restricted || std::binary_search(predicates_.jobs.begin(), predicates_.jobs.end(), j.name)) jobs_.push_back(j.name);
  }
  std::sort(jobs_.begin(), jobs_.end());
}

storage::ScanSpec TableScan::specFor(const std::string& job) const {
  storage::ScanSpec spec;
  spec.job = job;
  spec.table = table_.table;
  spec.columns = storage_columns_;
  spec.from_step = predicates_.from_step;
  spec.to_step = predicates_.to_step;
  spec.ranks = predicates_.ranks;
  spec.batch_rows = kVectorSize;
  spec.threads = scanThreads(ctx_.options());
  // The lead values a plan keeps count against the query's memory (plan_memory_): at most
  // an eighth of it.
  spec.plan_bytes = std::min(spec.plan_bytes, ctx_.options().memory_limit_bytes / 8);
  // The plan's list of chunk sets, all of it: a listing stops there, not at the list's end.
  spec.max_plan_bytes = ctx_.options().memory_limit_bytes;
  return spec;
}

template <typename T>
T TableScan::opened(Result<T> r, const std::string& job) const {
  if (r.isOk()) return std::move(r).value();
  if (r.status().isNotFound()) return nullptr;
  if (r.status().code() == Status::Code::kResourceExhausted) {  // the listing passed ScanSpec::max_plan_bytes
    throw ExecutionError("query cancelled: a scan's plan needs more than the memory limit of " + bytesText(ctx_.options().memory_limit_bytes) +
                         " (listing " + table_.name + " of job '" + job + "')");
  }
  failed(job, r.status());
}

void TableScan::failed(std::string_view job, const Status& s) const {
  throw ExecutionError("scanning " + table_.name + " of job '" + std::string(job) + "': " + s.toString());
}

bool TableScan::openNextJob() {
  listJobs();
  while (job_ix_ < jobs_.size()) {
    const std::string& job = jobs_[job_ix_++];
    cursor_ = opened(store_.scan(specFor(job)), job);
    if (!cursor_) continue;
    plan_memory_.set(cursor_->stats().plan_bytes);
    job_value_ = Value::varchar(job);
    ctx_.stats().jobs_scanned++;
    return true;
  }
  return false;
}

std::vector<PhysicalOperatorPtr> TableScan::split(size_t threads, SplitOrder order) {
  const ProfileTimer timer(profileToUpdate());  // opening the parts lists their chunk sets
  listJobs();
  size_t parts = 1, plan_bytes = 0;
  for (const std::string& job : jobs_) {
    storage::ScanSpec spec = specFor(job);
    spec.contiguous_parts = order == SplitOrder::kContiguous;
    job_parts_.push_back(opened(store_.scanParts(spec, threads), job));
    job_values_.push_back(Value::varchar(job));
    if (job_parts_.back()) {
      parts = std::max(parts, job_parts_.back()->size());
      ctx_.stats().jobs_scanned++;
      plan_bytes += job_parts_.back()->size() > 0 ? job_parts_.back()->part(0).stats().plan_bytes : 0;
      plan_memory_.set(plan_bytes);
    }
  }
  std::vector<PhysicalOperatorPtr> out;
  for (size_t i = 0; i < parts; ++i) {
    auto part = countedAsThis(std::unique_ptr<TableScanPart>(new TableScanPart(*this, i)));
    parts_.push_back(part.get());
    out.push_back(std::move(part));
  }
  return out;
}

void TableScan::finishSplit() {
  QueryStats& q = ctx_.stats();
  for (const auto& jp : job_parts_) {
    for (size_t i = 0; jp && i < jp->size(); ++i) {
      const storage::ScanStats& s = jp->part(i).stats();
      q.chunks_read += s.chunks_read;
      q.chunks_skipped += s.chunks_skipped;
      q.head_rows_read += s.head_rows_read;
    }
  }
  for (const auto& p : parts_) countScanned(p->rows_);
  job_parts_.clear();
  parts_.clear();
  plan_memory_.set(0);
}

void TableScan::countScanned(size_t rows) {
  QueryStats& q = ctx_.stats();
  q.rows_scanned += rows;
  q.values_scanned += rows * storage_columns_.size();
}

bool TableScan::produce(DataChunk& out) {
  for (;;) {
    ctx_.check();
    if (!cursor_ && !openNextJob()) return false;
    bool has_rows = false;
    Status s = cursor_->next(&batch_, &has_rows);
    if (!s.isOk()) failed(job_value_.stringValue(), s);
    if (!has_rows || batch_.rows == 0) {
      finishCursor();
      continue;
    }
    toChunk(batch_, job_value_, out);
    countScanned(batch_.rows);
    return true;
  }
}

void TableScan::toChunk(storage::ColumnBatch& batch, const Value& job, DataChunk& out) const {
  const size_t n = batch.rows;
  out.reset(column_ids_.size());
  out.rows = n;
  for (size_t j = 0; j < column_ids_.size(); ++j) {
    Vector& v = out.columns[j];
    if (batch_index_[j] < 0) {
      v.setConstant(job);
      continue;
    }
    storage::Column& c = batch.columns[static_cast<size_t>(batch_index_[j])];
    v.type = types[j];
    v.constant = false;
    v.validity.clear();
    if (c.type == storage::ColumnType::kHistogram) {
      v.hist.resize(n);
      for (size_t i = 0; i < n; ++i) v.hist[i] = &c.hists[i];
      continue;
    }
    v.i64.swap(c.ints);  // the batch gets the old buffer back for its next fill
    const TableColumn& tc = table_.columns[column_ids_[j]];
    if (tc.has_null_sentinel) {
      for (size_t i = 0; i < n; ++i) {
        if (v.i64[i] == tc.null_sentinel) v.setNull(i);
      }
    }
  }
}

TableScanPart::TableScanPart(const TableScan& scan, size_t index) : PhysicalOperator(scan.ctx_), scan_(scan), index_(index) {
  names = scan.names;
  types = scan.types;
}

std::string TableScanPart::describe() const { return "TABLE_SCAN_PART " + std::to_string(index_); }

bool TableScanPart::produce(DataChunk& out) {
  const auto& jobs = scan_.job_parts_;
  for (;;) {
    ctx_.check();
    if (job_ix_ >= jobs.size()) return false;
    storage::ScanParts* parts = jobs[job_ix_].get();
    if (parts == nullptr || index_ >= parts->size()) {
      ++job_ix_;
      continue;
    }
    storage::ScanPart& part = parts->part(index_);
    if (!in_stripe_) {
      if (!part.nextStripe()) {
        ++job_ix_;
        continue;
      }
      in_stripe_ = true;
    }
    bool has_rows = false;
    Status s = part.next(&batch_, &has_rows);
    if (!s.isOk()) scan_.failed(scan_.job_values_[job_ix_].stringValue(), s);
    if (!has_rows || batch_.rows == 0) {
      in_stripe_ = false;
      continue;
    }
    scan_.toChunk(batch_, scan_.job_values_[job_ix_], out);
    rows_ += batch_.rows;
    out.order = (static_cast<uint64_t>(job_ix_) << 32) | part.stripe();
    return true;
  }
}

std::string TableScan::describe() const {
  std::string out = "TABLE_SCAN " + table_.name + " " + describePredicates(predicates_, true, true) + " columns=[";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  out += "]";
  if (predicates_.contradiction()) out += " (nothing can match)";
  return out;
}

bool DummyScan::produce(DataChunk& out) {
  if (done_) return false;
  done_ = true;
  out.reset(0);
  out.rows = 1;
  return true;
}

}  // namespace argus::query
