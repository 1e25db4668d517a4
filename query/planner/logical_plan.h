// The logical plan: relational operators over bound expressions, before the choice of
// physical operators (docs/query/language.md, "Plans"). Built by the planner from a
// BoundSelect; predicates on job, rank and step are already pushed into kGet.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "query/binder/bound_select.h"

namespace argus::query {

// What a store scan is restricted to, from WHERE conjuncts on job, rank and step.
struct ScanPredicates {
  bool jobs_restricted = false;
  std::vector<std::string> jobs;  // when restricted; sorted, unique
  bool ranks_restricted = false;
  std::vector<uint32_t> ranks;    // when restricted; sorted, unique
  uint64_t from_step = 0;         // [from_step, to_step)
  uint64_t to_step = UINT64_MAX;
  // True when no row can match (an empty job or rank set, an empty step range).
  bool contradiction() const {
    return (jobs_restricted && jobs.empty()) || (ranks_restricted && ranks.empty()) || from_step >= to_step;
  }
};

enum class LogicalOpType : uint8_t {
  kGet, kTableFunction, kDummy, kFilter, kHopExpand, kAggregate, kWindow, kProjection, kDistinct, kOrder, kLimit
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
  // kTableFunction: the call, bound (owned by the BoundSelect, which outlives the plan)
  const BoundSource* function_call = nullptr;
  // kFilter
  BoundExprPtr predicate;
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
