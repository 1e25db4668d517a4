#include "query/planner/planner.h"

#include <algorithm>

#include "query/planner/pushdown.h"

namespace argus::query {

namespace {

LogicalOperatorPtr makeOp(LogicalOpType type, LogicalOperatorPtr child) {
  auto op = std::make_unique<LogicalOperator>();
  op->type = type;
  if (child) {
    op->names = child->names;
    op->types = child->types;
    op->children.push_back(std::move(child));
  }
  return op;
}

void collectColumns(const BoundExpr* e, std::vector<bool>* used) {
  if (!e) return;
  if (e->kind == BoundExprKind::kColumnRef && e->column < used->size()) (*used)[e->column] = true;
  for (const auto& c : e->children) collectColumns(c.get(), used);
}

void remapColumns(BoundExpr* e, const std::vector<size_t>& map) {
  if (!e) return;
  visitExpr(*e, [&](BoundExpr& n) {
    if (n.kind == BoundExprKind::kColumnRef) n.column = map[n.column];
  });
}

// The expressions evaluated directly on the source's rows.
std::vector<BoundExpr*> sourceExpressions(BoundSelect& s) {
  std::vector<BoundExpr*> out;
  out.push_back(s.where.get());
  for (auto& g : s.groups) out.push_back(g.get());
  for (auto& a : s.aggregates) {
    for (auto& arg : a.args) out.push_back(arg.get());
  }
  if (!s.aggregated) {
    for (auto& p : s.projection) out.push_back(p.get());
  }
  return out;
}

LogicalOperatorPtr planSource(BoundSelect& s, const QueryOptions& options) {
  BoundSource& src = s.source;
  if (src.kind == BoundSource::Kind::kNone) return makeOp(LogicalOpType::kDummy, nullptr);
  if (src.kind == BoundSource::Kind::kSubquery) return planSelect(*src.subquery, options);

  auto get = makeOp(LogicalOpType::kGet, nullptr);
  get->table = src.table;
  if (options.pushdown) get->predicates = pushDownPredicates(&s.where, *src.table);
  // Only the columns the query reads leave the scan.
  std::vector<bool> used(src.names.size(), false);
  for (BoundExpr* e : sourceExpressions(s)) collectColumns(e, &used);
  std::vector<size_t> map(src.names.size(), 0);
  for (size_t i = 0; i < used.size(); ++i) {
    if (!used[i]) continue;
    map[i] = get->column_ids.size();
    get->column_ids.push_back(i);
    get->names.push_back(src.names[i]);
    get->types.push_back(src.types[i]);
  }
  for (BoundExpr* e : sourceExpressions(s)) remapColumns(e, map);
  return get;
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
