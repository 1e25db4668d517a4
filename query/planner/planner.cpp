#include "query/planner/planner.h"

#include <algorithm>

#include "query/planner/pushdown.h"
#include "query/planner/source_planner.h"

namespace argus::query {

namespace {

// The expressions evaluated directly on the source's rows.
std::vector<BoundExpr*> sourceExpressions(BoundSelect& s) {
  std::vector<BoundExpr*> out;
  out.push_back(s.where.get());
  for (auto& g : s.groups) out.push_back(g.get());
  for (auto& a : s.aggregates) {
    for (auto& arg : a.args) out.push_back(arg.get());
  }
  if (!s.aggregated) {
    for (auto& w : s.windows) {
      for (auto* list : {&w.args, &w.partitions, &w.orders}) {
        for (auto& e : *list) out.push_back(e.get());
      }
    }
    for (auto& p : s.projection) out.push_back(p.get());
  }
  return out;
}

// Whether the rows reaching a window already come in its order, so it need not sort them:
// a store table's scan yields them by job (name order), rank, step (storage/store.h), a
// table function in its binding's `order`, and filters keep that order. A column the
// pushed conditions restrict to one value orders nothing and may appear anywhere; the
// others must be a prefix of that order: first the PARTITION BY columns (in any order),
// then the ORDER BY columns, ascending.
bool inputInWindowOrder(const LogicalOperator& input, const BoundWindow& w) {
  if (w.partitions.empty() && w.orders.empty()) return true;
  const LogicalOperator* op = &input;
  while (op->type == LogicalOpType::kFilter) op = op->children[0].get();
  std::vector<std::string> source_order;
  if (op->type == LogicalOpType::kGet && op->table->kind == TableInfo::Kind::kStore) {
    source_order = {"job", "rank", "step"};
  } else if (op->type == LogicalOpType::kTableFunction) {
    source_order = op->function_call->function_binding.order;
  } else {
    return false;
  }
  const ScanPredicates& p = op->predicates;
  auto fixed = [&](const std::string& c) {
    if (c == "job") return p.jobs_restricted && p.jobs.size() == 1;
    if (c == "rank") return p.ranks_restricted && p.ranks.size() == 1;
    return c == "step" && p.to_step != UINT64_MAX && p.from_step + 1 == p.to_step;
  };
  std::vector<std::string> scan_order;
  for (const std::string& c : source_order) {
    if (!fixed(c)) scan_order.push_back(c);
  }
  auto nameOf = [&](const BoundExpr& e) -> std::string { return e.kind == BoundExprKind::kColumnRef ? op->names[e.column] : ""; };
  std::vector<std::string> partitions;
  for (const auto& e : w.partitions) {
    std::string n = nameOf(*e);
    if (n.empty()) return false;
    if (!fixed(n) && std::find(partitions.begin(), partitions.end(), n) == partitions.end()) partitions.push_back(n);
  }
  size_t next = partitions.size();
  if (next > scan_order.size()) return false;
  for (const std::string& n : partitions) {
    if (std::find(scan_order.begin(), scan_order.begin() + static_cast<ptrdiff_t>(next), n) == scan_order.begin() + static_cast<ptrdiff_t>(next)) return false;
  }
  for (size_t i = 0; i < w.orders.size(); ++i) {
    std::string n = nameOf(*w.orders[i]);
    if (n.empty()) return false;
    if (fixed(n)) continue;
    if (w.desc[i] || next >= scan_order.size() || scan_order[next] != n) return false;
    ++next;
  }
  return true;
}

LogicalOperatorPtr planSource(BoundSelect& s, const QueryOptions& options) {
  BoundSource& src = s.source;
  if (src.kind == BoundSource::Kind::kNone) return makeOp(LogicalOpType::kDummy, nullptr);
  if (src.kind == BoundSource::Kind::kSubquery) return planSelect(*src.subquery, options);

  // A scan or a join: WHERE goes into it, and only the columns the query reads leave it.
  std::vector<BoundExprPtr> conjuncts;
  splitConjuncts(std::move(s.where), &conjuncts);
  std::vector<bool> used(src.names.size(), false);
  for (BoundExpr* e : sourceExpressions(s)) collectColumns(e, &used);
  std::vector<size_t> map;
  LogicalOperatorPtr op = planFrom(src, std::move(conjuncts), std::move(used), options, &map);
  // Window results follow the source's columns (BoundSelect::windows).
  const size_t width = op->names.size();
  for (size_t i = 0; !s.aggregated && i < s.windows.size(); ++i) map.push_back(width + i);
  for (BoundExpr* e : sourceExpressions(s)) remapColumns(e, map);
  return op;
}

}  // namespace

LogicalOperatorPtr planSelect(BoundSelect& s, const QueryOptions& options) {
  // A subquery's plan ends with its visible columns (its hidden ORDER BY keys dropped below).
  LogicalOperatorPtr op = planSource(s, options);
  if (s.where) {
    op = makeOp(LogicalOpType::kFilter, std::move(op));
    op->predicate = std::move(s.where);
  }
  if (s.aggregated) {
    for (BoundExprPtr& g : s.groups) {
      if (g->kind != BoundExprKind::kFunction || g->function->name != "hop") continue;
      // GROUP BY hop(step, size, slide): each row once per window, grouped by its start.
      auto hop = makeOp(LogicalOpType::kHopExpand, std::move(op));
      hop->hop_size = g->children[1]->value.bigintValue();
      hop->hop_slide = g->children[2]->value.bigintValue();
      hop->exprs.push_back(std::move(g->children[0]));
      hop->names.push_back("hop_start");
      hop->types.push_back(LogicalType::kBigInt);
      g = makeColumnRef(hop->names.size() - 1, LogicalType::kBigInt, g->pos);
      op = std::move(hop);
    }
    auto agg = makeOp(LogicalOpType::kAggregate, std::move(op));
    agg->names = s.group_names;
    agg->types.clear();
    for (auto& g : s.groups) agg->types.push_back(g->type);
    for (auto& a : s.aggregates) {
      agg->names.push_back(a.text);
      agg->types.push_back(a.type);
    }
    agg->groups = std::move(s.groups);
    agg->aggregates = std::move(s.aggregates);
    op = std::move(agg);
    if (s.having) {
      op = makeOp(LogicalOpType::kFilter, std::move(op));
      op->predicate = std::move(s.having);
    }
  }
  if (!s.windows.empty()) {
    auto win = makeOp(LogicalOpType::kWindow, std::move(op));
    for (BoundWindow& w : s.windows) {
      w.presorted = inputInWindowOrder(*win->children[0], w);
      win->names.push_back(w.text);
      win->types.push_back(w.call.type);
    }
    win->windows = std::move(s.windows);
    op = std::move(win);
  }
  auto proj = makeOp(LogicalOpType::kProjection, std::move(op));
  proj->names = s.names;
  proj->types.clear();
  for (auto& e : s.projection) proj->types.push_back(e->type);
  proj->exprs = std::move(s.projection);
  op = std::move(proj);

  if (s.distinct) op = makeOp(LogicalOpType::kDistinct, std::move(op));
  if (!s.order.empty()) {
    op = makeOp(LogicalOpType::kOrder, std::move(op));
    op->order = s.order;
  }
  if (s.limit >= 0 || s.offset > 0) {
    op = makeOp(LogicalOpType::kLimit, std::move(op));
    op->limit = s.limit;
    op->offset = s.offset;
  }
  if (op->names.size() > s.visible) {
    // ORDER BY keys that are not in the select list leave after the sort.
    auto drop = makeOp(LogicalOpType::kProjection, std::move(op));
    for (size_t i = 0; i < s.visible; ++i) drop->exprs.push_back(makeColumnRef(i, drop->types[i]));
    drop->names.resize(s.visible);
    drop->types.resize(s.visible);
    op = std::move(drop);
  }
  return op;
}

}  // namespace argus::query
