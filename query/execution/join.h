// Join: what the hash join and the nested-loop join share. The right side is read whole into
// column buffers (strings and histograms copied into an arena, charged to the query's memory
// cap); then each left chunk is matched against it: the subclass lists (left row, right row)
// pairs a batch of at most kVectorSize at a time, this class gathers them into an output
// chunk, keeps those the residual condition holds for, and for a LEFT JOIN emits the left
// rows no pair was kept for with NULLs on the right. The deadline is checked per output
// batch, so a join producing many rows from few input rows still stops in time.
#pragma once

#include "query/execution/expression_executor.h"
#include "query/execution/physical_operator.h"
#include "query/parser/ast.h"

namespace argus::query {

class Join : public PhysicalOperator {
 public:
  bool produce(DataChunk& out) override;

 protected:
  // residual: over [left..., right...] (null: none). what: the memory cap's name for it.
  Join(QueryContext& ctx, PhysicalOperatorPtr left, PhysicalOperatorPtr right, JoinType type, BoundExprPtr residual, const char* what);

  // Called for each right chunk as it is buffered; its rows are numbered from first_row.
  virtual void addRight(const DataChunk& chunk, size_t first_row) = 0;
  // Bytes the subclass holds besides the buffered rows (charged with them).
  virtual size_t indexBytes() const = 0;
  // Starts matching a new left chunk (left_ holds it).
  virtual void startLeft() = 0;
  // Appends up to `room` pairs to pair_left_ (active-row positions in left_) and
  // pair_right_ (buffered right rows). Returns false once the left chunk has no more.
  virtual bool nextPairs(size_t room) = 0;

  // describe()'s line: "<op> INNER|LEFT|CROSS [keys] residual <condition>".
  std::string describeJoin(const char* op, const std::string& keys) const;

  JoinType type_;
  DataChunk left_;
  size_t right_rows_ = 0;
  std::vector<uint32_t> pair_left_, pair_right_;

 private:
  void buildRight();
  bool emitPairs(DataChunk& out);
  bool emitUnmatched(DataChunk& out);

  BoundExprPtr residual_;
  std::unique_ptr<ExpressionExecutor> residual_executor_;
  MemoryReservation memory_;
  std::vector<Vector> right_;  // the right side's rows, flat
  Arena arena_;
  bool built_ = false;
  bool have_left_ = false;
  bool pairs_done_ = false;
  std::vector<uint8_t> matched_;  // per active left row: some pair of it was kept
  size_t unmatched_pos_ = 0;
  std::vector<uint32_t> left_rows_;  // scratch: the left chunk's rows of the pairs
  std::vector<uint32_t> kept_;
};

}  // namespace argus::query
