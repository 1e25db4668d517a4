// TableScan: rows of a store table through the store's scan API (storage/store.h), job by
// job, as chunks. Pushed-down predicates restrict the jobs (only those named, else every job
// in the store, in name order), the ranks and the step range of each ScanSpec; only the
// columns the query reads are requested. Integer columns move from the store's ColumnBatch
// into the chunk without a copy; the job column is a constant vector.
#pragma once

#include "query/binder/catalog.h"
#include "query/execution/physical_operator.h"
#include "query/planner/logical_plan.h"
#include "storage/store.h"

namespace argus::query {

// Threads for each table scan: QueryOptions::scan_threads, else one per core (at most 8).
size_t scanThreads(const QueryOptions& options);

class TableScan;

// One thread's share of a TableScan (TableScan::split): of every job, the stripes of ranks
// its storage::ScanPart holds. A chunk's order is (job, stripe): one stripe's rows in order.
class TableScanPart final : public PhysicalOperator {
 public:
  bool produce(DataChunk& chunk) override;
  std::string describe() const override;

 private:
  friend class TableScan;
  TableScanPart(const TableScan& scan, size_t index);

  const TableScan& scan_;
  size_t index_;
  size_t job_ix_ = 0;
  bool in_stripe_ = false;
  storage::ColumnBatch batch_;
  uint64_t rows_ = 0;
};

class TableScan final : public PhysicalOperator {
 public:
  TableScan(QueryContext& ctx, const storage::Store& store, const TableInfo& table, std::vector<size_t> column_ids, ScanPredicates predicates);
  ~TableScan() override;
  bool produce(DataChunk& chunk) override;
  std::string describe() const override;

  // One TableScanPart per part (at least one). finishSplit() adds their figures to the
  // query's stats; the parts must still be alive then.
  std::vector<PhysicalOperatorPtr> split(size_t threads, SplitOrder order) override;
  void finishSplit() override;

 private:
  friend class TableScanPart;
  void listJobs();
  storage::ScanSpec specFor(const std::string& job) const;
  // Null when the job was dropped since it was listed; throws on other errors.
  template <typename T>
  T opened(Result<T> r, const std::string& job) const;
  [[noreturn]] void failed(std::string_view job, const Status& s) const;
  bool openNextJob();
  void finishCursor();
  // The batch's rows as chunk columns (integer buffers swapped, not copied).
  void toChunk(storage::ColumnBatch& batch, const Value& job, DataChunk& out) const;
  void countScanned(size_t rows);

  const storage::Store& store_;
  const TableInfo& table_;
  std::vector<size_t> column_ids_;
  ScanPredicates predicates_;
  std::vector<std::string> storage_columns_;  // requested from the store
  std::vector<int> batch_index_;             // per output column: index in the batch, -1 for job

  bool jobs_listed_ = false;
  std::vector<std::string> jobs_;
  size_t job_ix_ = 0;
  Value job_value_;
  std::unique_ptr<storage::ScanCursor> cursor_;
  storage::ColumnBatch batch_;
  MemoryReservation plan_memory_{ctx_, "a scan's plan"};  // the open scans' plans (ScanStats::plan_bytes)

  // split(): per listed job its parts (null: dropped since listed) and its name as a value.
  std::vector<std::unique_ptr<storage::ScanParts>> job_parts_;
  std::vector<Value> job_values_;
  std::vector<const TableScanPart*> parts_;
};

// DummyScan: one row without columns (SELECT without FROM).
class DummyScan final : public PhysicalOperator {
 public:
  explicit DummyScan(QueryContext& ctx) : PhysicalOperator(ctx) {}
  bool produce(DataChunk& chunk) override;
  std::string describe() const override { return "DUMMY_SCAN (one row)"; }

 private:
  bool done_ = false;
};

}  // namespace argus::query
