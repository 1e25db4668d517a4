// The logical plan: relational operators over bound expressions, before the choice of
// physical operators (docs/query/language.md, "Plans"). Built by the planner from a
// BoundSelect; predicates on job, rank and step are already pushed into kGet.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "query/binder/bound_select.h"
#include "query/planner/scan_predicates.h"

namespace argus::query {

enum class LogicalOpType : uint8_t {
  kGet, kTableFunction, kDummy, kFilter, kJoin, kHopExpand, kAggregate, kWindow, kProjection, kDistinct, kOrder, kLimit
};

struct LogicalOperator {
  LogicalOpType type = LogicalOpType::kDummy;
  std::vector<std::unique_ptr<LogicalOperator>> children;
  std::vector<std::string> names;  // output columns
  std::vector<LogicalType> types;

  // kGet
  const TableInfo* table = nullptr;
  std::vector<size_t> column_ids;  // table (kTableFunction: binding) columns produced, in output order
  ScanPredicates predicates;
  // kTableFunction: the call, bound (owned by the BoundSelect, which outlives the plan);
  // `predicates` are the WHERE conditions pushed into it (TableFunction::rowsOf)
  const BoundSource* function_call = nullptr;
  // kFilter; kJoin: the residual condition over [left..., right...] (null: none)
  BoundExprPtr predicate;
  // kJoin: output is [left..., right...]; left_keys[i] (over the left's columns) equals
  // right_keys[i] (over the right's); no keys: a nested loop
  JoinType join_type = JoinType::kInner;
  std::vector<BoundExprPtr> left_keys, right_keys;
  // kAggregate: output is [groups..., aggregates...]
  std::vector<BoundExprPtr> groups;
  std::vector<BoundAggregate> aggregates;
  // kHopExpand: output is [input..., window start], each row once per window of exprs[0]
  int64_t hop_size = 0;
  int64_t hop_slide = 0;
  // kWindow: output is [input..., one column per window]
  std::vector<BoundWindow> windows;
  // kProjection (and kHopExpand's step)
  std::vector<BoundExprPtr> exprs;
  // kOrder
  std::vector<OrderKey> order;
  // kLimit
  int64_t limit = -1;
  int64_t offset = 0;
};
using LogicalOperatorPtr = std::unique_ptr<LogicalOperator>;

}  // namespace argus::query
