#include "query/planner/source_planner.h"

#include <numeric>

#include "query/planner/planner.h"
#include "query/planner/pushdown.h"

namespace argus::query {

namespace {

// Which side of a join an expression reads: none (constants only), left, right or both.
enum Sides : uint8_t { kNoSide = 0, kLeftSide = 1, kRightSide = 2, kBothSides = 3 };

uint8_t sidesOf(const BoundExpr& e, size_t left_width) {
  uint8_t sides = kNoSide;
  if (e.kind == BoundExprKind::kColumnRef) sides = e.column < left_width ? kLeftSide : kRightSide;
  for (const auto& c : e.children) sides |= sidesOf(*c, left_width);
  return sides;
}

void shiftColumns(BoundExpr* e, size_t by) {
  visitExpr(*e, [&](BoundExpr& n) {
    if (n.kind == BoundExprKind::kColumnRef) n.column -= by;
  });
}

// The one column e reads; -1: none, -2: several.
int onlyColumn(const BoundExpr& e) {
  int column = e.kind == BoundExprKind::kColumnRef ? static_cast<int>(e.column) : -1;
  for (const auto& c : e.children) {
    int k = onlyColumn(*c);
    if (k == -2 || (k >= 0 && column >= 0 && k != column)) return -2;
    if (k >= 0) column = k;
  }
  return column;
}

// With a key l = r between two columns of one type, a condition on l alone holds for r in
// every matching pair, so it also restricts the other side: WHERE s.job = 'a' in
// steps s JOIN kernels k USING (job, ...) reaches the kernels scan as k.job = 'a'. Left
// conditions copy to the right in any join (right rows they drop match no kept left row);
// right conditions copy to the left only in an inner join.
void inferAcrossKeys(const std::vector<BoundExprPtr>& left_keys, const std::vector<BoundExprPtr>& right_keys, bool inner,
                     std::vector<BoundExprPtr>* to_left, std::vector<BoundExprPtr>* to_right) {
  const size_t left_count = to_left->size(), right_count = to_right->size();
  auto copyOver = [](const std::vector<BoundExprPtr>& from, size_t count, size_t column, size_t to, std::vector<BoundExprPtr>* out) {
    for (size_t i = 0; i < count; ++i) {
      if (onlyColumn(*from[i]) != static_cast<int>(column)) continue;
      BoundExprPtr copy = copyExpr(*from[i]);
      visitExpr(*copy, [&](BoundExpr& n) {
        if (n.kind == BoundExprKind::kColumnRef) n.column = to;
      });
      out->push_back(std::move(copy));
    }
  };
  for (size_t k = 0; k < left_keys.size(); ++k) {
    const BoundExpr& l = *left_keys[k];
    const BoundExpr& r = *right_keys[k];
    // Equal DOUBLEs may differ (-0.0 and 0.0 under 1 / x); equal values of the other types
    // are the same value.
    if (l.kind != BoundExprKind::kColumnRef || r.kind != BoundExprKind::kColumnRef || l.type != r.type || l.type == LogicalType::kDouble)
      continue;
    copyOver(*to_left, left_count, l.column, r.column, to_right);
    if (inner) copyOver(*to_right, right_count, r.column, l.column, to_left);
  }
}

LogicalOperatorPtr filtered(LogicalOperatorPtr op, BoundExprPtr where) {
  if (!where) return op;
  auto f = makeOp(LogicalOpType::kFilter, std::move(op));
  f->predicate = std::move(where);
  return f;
}

LogicalOperatorPtr planScan(BoundSource& src, std::vector<BoundExprPtr> conjuncts, std::vector<bool> used, const QueryOptions& options,
                            std::vector<size_t>* map) {
  BoundExprPtr where = joinConjuncts(std::move(conjuncts));
  LogicalOperatorPtr get;
  if (src.kind == BoundSource::Kind::kTableFunction) {
    get = makeOp(LogicalOpType::kTableFunction, nullptr);
    get->function_call = &src;
    const TableInfo* rows_of = src.function->rowsOf();
    if (options.pushdown && rows_of) get->predicates = pushDownPredicates(&where, *rows_of);
  } else {
    get = makeOp(LogicalOpType::kGet, nullptr);
    get->table = src.table;
    if (options.pushdown) get->predicates = pushDownPredicates(&where, *src.table);
  }
  // Only the columns the query reads leave the scan.
  collectColumns(where.get(), &used);
  map->assign(src.names.size(), kNotProduced);
  for (size_t i = 0; i < used.size(); ++i) {
    if (!used[i]) continue;
    (*map)[i] = get->column_ids.size();
    get->column_ids.push_back(i);
    get->names.push_back(src.names[i]);
    get->types.push_back(src.types[i]);
  }
  remapColumns(where.get(), *map);
  return filtered(std::move(get), std::move(where));
}

LogicalOperatorPtr planJoin(BoundSource& src, std::vector<BoundExprPtr> conjuncts, std::vector<bool> needed, const QueryOptions& options,
                            std::vector<size_t>* map) {
  const size_t lw = src.left->names.size();
  const bool inner = src.join_type != JoinType::kLeft;
  std::vector<BoundExprPtr> to_left, to_right, above, condition;
  // WHERE conjuncts: one side's go below the join (for a LEFT JOIN not the right's: it would
  // keep rows that should have been NULL-filled); an inner join takes the others into its ON.
  for (BoundExprPtr& c : conjuncts) {
    uint8_t sides = sidesOf(*c, lw);
    if (sides == kLeftSide) {
      to_left.push_back(std::move(c));
    } else if (sides == kRightSide && inner) {
      to_right.push_back(std::move(c));
    } else if (sides == kBothSides && inner) {
      condition.push_back(std::move(c));
    } else {
      above.push_back(std::move(c));
    }
  }
  // ON conjuncts: one side's go below it, except the left's in a LEFT JOIN (they decide
  // which left rows match, not which are kept).
  std::vector<BoundExprPtr> on;
  splitConjuncts(std::move(src.condition), &on);
  for (BoundExprPtr& c : on) {
    uint8_t sides = sidesOf(*c, lw);
    if (sides == kLeftSide && inner) {
      to_left.push_back(std::move(c));
    } else if (sides == kRightSide) {
      to_right.push_back(std::move(c));
    } else {
      condition.push_back(std::move(c));
    }
  }
  // Equi-join keys.
  std::vector<BoundExprPtr> left_keys, right_keys, residual;
  for (BoundExprPtr& c : condition) {
    if (c->kind == BoundExprKind::kFunction && c->function->name == "=" && c->children.size() == 2) {
      uint8_t a = sidesOf(*c->children[0], lw), b = sidesOf(*c->children[1], lw);
      if ((a == kLeftSide && b == kRightSide) || (a == kRightSide && b == kLeftSide)) {
        left_keys.push_back(std::move(c->children[a == kLeftSide ? 0 : 1]));
        right_keys.push_back(std::move(c->children[a == kLeftSide ? 1 : 0]));
        continue;
      }
    }
    residual.push_back(std::move(c));
  }
  inferAcrossKeys(left_keys, right_keys, inner, &to_left, &to_right);

  // Columns each side must produce: those needed above, and those the join reads.
  for (const auto* list : {&residual, &above}) {
    for (const BoundExprPtr& e : *list) collectColumns(e.get(), &needed);
  }
  for (const BoundExprPtr& k : left_keys) collectColumns(k.get(), &needed);
  for (const BoundExprPtr& k : right_keys) collectColumns(k.get(), &needed);
  for (BoundExprPtr& c : to_right) shiftColumns(c.get(), lw);
  for (BoundExprPtr& k : right_keys) shiftColumns(k.get(), lw);

  std::vector<size_t> left_map, right_map;
  LogicalOperatorPtr left =
      planFrom(*src.left, std::move(to_left), std::vector<bool>(needed.begin(), needed.begin() + lw), options, &left_map);
  LogicalOperatorPtr right =
      planFrom(*src.right, std::move(to_right), std::vector<bool>(needed.begin() + lw, needed.end()), options, &right_map);
  for (BoundExprPtr& k : left_keys) remapColumns(k.get(), left_map);
  for (BoundExprPtr& k : right_keys) remapColumns(k.get(), right_map);

  auto join = std::make_unique<LogicalOperator>();
  join->type = LogicalOpType::kJoin;
  join->join_type = src.join_type;
  // Output columns are named qualified (s.rank), so EXPLAIN tells the sides apart.
  map->assign(src.names.size(), kNotProduced);
  for (size_t i = 0; i < src.names.size(); ++i) {
    size_t m = i < lw ? left_map[i] : right_map[i - lw];
    if (m != kNotProduced) (*map)[i] = i < lw ? m : left->names.size() + m;
  }
  for (const LogicalOperatorPtr* side : {&left, &right}) {
    for (size_t i = 0; i < (*side)->names.size(); ++i) join->types.push_back((*side)->types[i]);
  }
  join->names.resize(join->types.size());
  for (size_t i = 0; i < src.names.size(); ++i) {
    if ((*map)[i] == kNotProduced) continue;
    join->names[(*map)[i]] = src.qualifiers[i].empty() ? src.names[i] : src.qualifiers[i] + "." + src.names[i];
  }
  for (BoundExprPtr& c : residual) remapColumns(c.get(), *map);
  join->predicate = joinConjuncts(std::move(residual));
  if (join->join_type == JoinType::kCross && !left_keys.empty()) join->join_type = JoinType::kInner;
  join->left_keys = std::move(left_keys);
  join->right_keys = std::move(right_keys);
  join->children.push_back(std::move(left));
  join->children.push_back(std::move(right));
  for (BoundExprPtr& c : above) remapColumns(c.get(), *map);
  return filtered(std::move(join), joinConjuncts(std::move(above)));
}

}  // namespace

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

LogicalOperatorPtr planFrom(BoundSource& src, std::vector<BoundExprPtr> conjuncts, std::vector<bool> needed, const QueryOptions& options,
                            std::vector<size_t>* map) {
  switch (src.kind) {
    case BoundSource::Kind::kTable:
    case BoundSource::Kind::kTableFunction:
      return planScan(src, std::move(conjuncts), std::move(needed), options, map);
    case BoundSource::Kind::kJoin:
      return planJoin(src, std::move(conjuncts), std::move(needed), options, map);
    case BoundSource::Kind::kSubquery:
    case BoundSource::Kind::kNone:
      break;
  }
  // A subquery yields all its columns.
  map->resize(src.names.size());
  std::iota(map->begin(), map->end(), size_t{0});
  return filtered(planSelect(*src.subquery, options), joinConjuncts(std::move(conjuncts)));
}

}  // namespace argus::query
