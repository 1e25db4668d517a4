// ExpressionExecutor: evaluates one bound expression over chunks, a whole chunk per call
// (no per-row virtual calls: one kernel call per node per chunk). Holds the per-node
// scratch vectors, so after the first chunks it allocates nothing more (strings that
// functions create go to per-node arenas, reset per chunk).
//
// Evaluation runs over the chunk's active rows (its selection) and yields a dense vector of
// that many rows, or a constant vector. A column reference without a selection returns the
// chunk's own vector (no copy). CASE evaluates each branch only on the rows that reach it,
// so `CASE WHEN x <> 0 THEN 10 // x END` never divides by zero.
#pragma once

#include <memory>
#include <vector>

#include "query/binder/bound_expression.h"
#include "query/common/vector.h"

namespace argus::query {

class ExpressionExecutor {
 public:
  explicit ExpressionExecutor(const BoundExpr& expr);
  ~ExpressionExecutor();
  ExpressionExecutor(ExpressionExecutor&&) noexcept;
  ExpressionExecutor& operator=(ExpressionExecutor&&) noexcept;

  // The value for every active row of chunk. Valid until the next call.
  const Vector& evaluate(const DataChunk& chunk);
  // For a BOOLEAN expression: writes into out the chunk rows among the active ones where it
  // is TRUE (not FALSE, not NULL); returns how many. AND narrows left to right.
  size_t select(const DataChunk& chunk, std::vector<uint32_t>& out);

 private:
  struct State;
  const Vector& eval(State& st, const DataChunk& chunk, const uint32_t* sel, size_t count);
  size_t selectRows(State& st, const DataChunk& chunk, const uint32_t* sel, size_t count, uint32_t* out);
  void evalCase(State& st, const DataChunk& chunk, const uint32_t* sel, size_t count);
  void evalIn(State& st, const DataChunk& chunk, const uint32_t* sel, size_t count);
  void evalLogical(State& st, const Vector& a, const Vector& b, size_t count);

  std::unique_ptr<State> root_;
};

}  // namespace argus::query
