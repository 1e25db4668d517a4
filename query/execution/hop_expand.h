// HopExpand: the rows behind GROUP BY hop(step, size, slide) (docs/query/language.md, "Step
// windows"). Emits each input row once per window that holds it, [s, s + size) for every
// multiple s of slide with s <= step < s + size (size / slide windows), with the window's
// start s appended as the last column; a NULL step gives one row with a NULL start. The
// aggregate above then groups by that column. Streams: a chunk's copies go out in chunks of
// up to kVectorSize rows before the next input chunk is read.
#pragma once

#include "query/binder/bound_expression.h"
#include "query/execution/expression_executor.h"
#include "query/execution/physical_operator.h"

namespace argus::query {

class HopExpand final : public PhysicalOperator {
 public:
  HopExpand(QueryContext& ctx, PhysicalOperatorPtr child, BoundExprPtr step, int64_t size, int64_t slide, std::string name);
  bool produce(DataChunk& chunk) override;
  std::string describe() const override;

 private:
  BoundExprPtr step_;
  int64_t size_, slide_;
  ExpressionExecutor executor_;

  DataChunk in_;
  const Vector* steps_ = nullptr;  // of in_'s active rows
  size_t row_ = 0;                 // next active row of in_ to expand
  int64_t copy_ = 0;               // next window of that row
  std::vector<uint32_t> sel_;
};

}  // namespace argus::query
