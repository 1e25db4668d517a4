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

class TableScan final : public PhysicalOperator {
 public:
  TableScan(QueryContext& ctx, const storage::Store& store, const TableInfo& table, std::vector<size_t> column_ids, ScanPredicates predicates);
  ~TableScan() override;
  bool next(DataChunk& chunk) override;
  std::string describe() const override;

 private:
  bool openNextJob();
  void finishCursor();

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
};

// DummyScan: one row without columns (SELECT without FROM).
class DummyScan final : public PhysicalOperator {
 public:
  explicit DummyScan(QueryContext& ctx) : PhysicalOperator(ctx) {}
  bool next(DataChunk& chunk) override;
  std::string describe() const override { return "DUMMY_SCAN (one row)"; }

 private:
  bool done_ = false;
};

}  // namespace argus::query
