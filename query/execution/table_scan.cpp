#include "query/execution/table_scan.h"

#include <algorithm>

#include "base/worker_threads.h"
#include "query/common/errors.h"

namespace argus::query {

namespace {

size_t scanThreads(const QueryOptions& o) {
  return o.scan_threads > 0 ? o.scan_threads : defaultWorkerThreads();
}

}  // namespace

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
}

bool TableScan::openNextJob() {
  if (!jobs_listed_) {
    jobs_listed_ = true;
    if (!predicates_.contradiction()) {
      for (const storage::JobInfo& j : store_.listJobs()) {
        if (!predicates_.jobs_restricted || std::binary_search(predicates_.jobs.begin(), predicates_.jobs.end(), j.name)) jobs_.push_back(j.name);
      }
      std::sort(jobs_.begin(), jobs_.end());
    }
  }
  while (job_ix_ < jobs_.size()) {
    const std::string& job = jobs_[job_ix_++];
    storage::ScanSpec spec;
    spec.job = job;
    spec.table = table_.table;
    spec.columns = storage_columns_;
    spec.from_step = predicates_.from_step;
    spec.to_step = predicates_.to_step;
    spec.ranks = predicates_.ranks;
    spec.batch_rows = kVectorSize;
    spec.threads = scanThreads(ctx_.options());
    auto cursor = store_.scan(spec);
    if (!cursor.isOk()) {
      if (cursor.status().isNotFound()) continue;  // dropped since it was listed
      throw ExecutionError("scanning " + table_.name + " of job '" + job + "': " + cursor.status().toString());
    }
    cursor_ = std::move(cursor).value();
    job_value_ = Value::varchar(job);
    ctx_.stats().jobs_scanned++;
    return true;
  }
  return false;
}

bool TableScan::next(DataChunk& out) {
  for (;;) {
    ctx_.check();
    if (!cursor_ && !openNextJob()) return false;
    bool has_rows = false;
    Status s = cursor_->next(&batch_, &has_rows);
    if (!s.isOk()) throw ExecutionError("scanning " + table_.name + " of job '" + job_value_.stringValue() + "': " + s.toString());
    if (!has_rows || batch_.rows == 0) {
      finishCursor();
      continue;
    }
    size_t n = batch_.rows;
    out.reset(column_ids_.size());
    out.rows = n;
    for (size_t j = 0; j < column_ids_.size(); ++j) {
      Vector& v = out.columns[j];
      if (batch_index_[j] < 0) {
        v.setConstant(job_value_);
        continue;
      }
      storage::Column& c = batch_.columns[static_cast<size_t>(batch_index_[j])];
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
    QueryStats& q = ctx_.stats();
    q.rows_scanned += n;
    q.values_scanned += n * storage_columns_.size();
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

bool DummyScan::next(DataChunk& out) {
  if (done_) return false;
  done_ = true;
  out.reset(0);
  out.rows = 1;
  return true;
}

}  // namespace argus::query
