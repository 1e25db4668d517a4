#include "query/planner/pushdown.h"

#include <algorithm>

namespace argus::query {

namespace {

bool isColumn(const BoundExpr& e, int column) { return column >= 0 && e.kind == BoundExprKind::kColumnRef && e.column == static_cast<size_t>(column); }
bool isConstant(const BoundExpr& e, LogicalType t) { return e.kind == BoundExprKind::kConstant && e.type == t && !e.value.isNull(); }

// The comparison operator with its operands swapped (3 < step is step > 3).
std::string flip(const std::string& op) {
  if (op == "<") return ">";
  if (op == "<=") return ">=";
  if (op == ">") return "<";
  if (op == ">=") return "<=";
  return op;
}

// Matches `column <op> constant` or `constant <op> column` for the comparison operators.
// Returns the operator as seen with the column on the left, or "" when e is not of that form.
std::string matchComparison(const BoundExpr& e, int column, LogicalType t, Value* constant) {
  if (e.kind != BoundExprKind::kFunction || e.children.size() != 2) return "";
  const std::string& op = e.function->name;
  if (op != "=" && op != "<" && op != "<=" && op != ">" && op != ">=") return "";
  const BoundExpr& l = *e.children[0];
  const BoundExpr& r = *e.children[1];
  if (isColumn(l, column) && isConstant(r, t)) {
    *constant = r.value;
    return op;
  }
  if (isConstant(l, t) && isColumn(r, column)) {
    *constant = l.value;
    return flip(op);
  }
  return "";
}

// Matches `column IN (constants...)` (not negated); NULL items never match and are dropped.
bool matchIn(const BoundExpr& e, int column, LogicalType t, std::vector<Value>* values) {
  if (e.kind != BoundExprKind::kIn || e.negated || !isColumn(*e.children[0], column)) return false;
  for (size_t i = 1; i < e.children.size(); ++i) {
    const BoundExpr& c = *e.children[i];
    if (c.kind != BoundExprKind::kConstant || c.type != t) return false;
    if (!c.value.isNull()) values->push_back(c.value);
  }
  return true;
}

template <typename T>
void restrict(bool* restricted, std::vector<T>* current, std::vector<T> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  if (*restricted) {
    std::vector<T> both;
    std::set_intersection(current->begin(), current->end(), values.begin(), values.end(), std::back_inserter(both));
    *current = std::move(both);
  } else {
    *current = std::move(values);
    *restricted = true;
  }
}

uint64_t clampStep(__int128 v) {
  if (v < 0) return 0;
  if (v > static_cast<__int128>(UINT64_MAX)) return UINT64_MAX;
  return static_cast<uint64_t>(v);
}

}  // namespace

ScanPredicates intersectPredicates(ScanPredicates a, const ScanPredicates& b) {
  if (b.jobs_restricted) restrict(&a.jobs_restricted, &a.jobs, b.jobs);
  if (b.ranks_restricted) restrict(&a.ranks_restricted, &a.ranks, b.ranks);
  a.from_step = std::max(a.from_step, b.from_step);
  a.to_step = std::min(a.to_step, b.to_step);
  return a;
}

void splitConjuncts(BoundExprPtr e, std::vector<BoundExprPtr>* out) {
  if (!e) return;
  if (e->kind == BoundExprKind::kAnd) {
    splitConjuncts(std::move(e->children[0]), out);
    splitConjuncts(std::move(e->children[1]), out);
    return;
  }
  out->push_back(std::move(e));
}

BoundExprPtr joinConjuncts(std::vector<BoundExprPtr> conjuncts) {
  BoundExprPtr out;
  for (BoundExprPtr& c : conjuncts) {
    if (!out) {
      out = std::move(c);
      continue;
    }
    auto a = std::make_unique<BoundExpr>();
    a->kind = BoundExprKind::kAnd;
    a->type = LogicalType::kBoolean;
    a->pos = c->pos;
    a->children.push_back(std::move(out));
    a->children.push_back(std::move(c));
    out = std::move(a);
  }
  return out;
}

ScanPredicates pushDownPredicates(BoundExprPtr* where, const TableInfo& table) {
  ScanPredicates p;
  if (!*where) return p;
  const int job = table.findColumn("job");
  const int rank = table.findColumn("rank");
  const int step = table.findColumn("step");
  std::vector<BoundExprPtr> conjuncts, rest;
  // Bounds on rank, [rank_from, rank_to), and where the conjuncts that set them wait in
  // `rest` (in their places: an AND evaluates its right side only on the rows its left
  // kept, so the order can decide whether a later term fails).
  __int128 rank_from = 0, rank_to = __int128{UINT32_MAX} + 1;
  std::vector<size_t> rank_bounds;
  splitConjuncts(std::move(*where), &conjuncts);
  for (BoundExprPtr& c : conjuncts) {
    Value v;
    std::vector<Value> values;
    std::string op;
    if ((op = matchComparison(*c, job, LogicalType::kVarchar, &v)) == "=") {
      restrict(&p.jobs_restricted, &p.jobs, std::vector<std::string>{v.stringValue()});
      continue;
    }
    if (matchIn(*c, job, LogicalType::kVarchar, &values)) {
      std::vector<std::string> jobs;
      for (const Value& x : values) jobs.push_back(x.stringValue());
      restrict(&p.jobs_restricted, &p.jobs, std::move(jobs));
      continue;
    }
    values.clear();
    bool rank_in = matchIn(*c, rank, LogicalType::kBigInt, &values);
    if (!rank_in && (op = matchComparison(*c, rank, LogicalType::kBigInt, &v)) == "=") {
      values.push_back(v);
      rank_in = true;
    }
    if (rank_in) {
      std::vector<uint32_t> ranks;
      for (const Value& x : values) {
        if (x.bigintValue() >= 0 && x.bigintValue() <= UINT32_MAX) ranks.push_back(static_cast<uint32_t>(x.bigintValue()));
      }
      restrict(&p.ranks_restricted, &p.ranks, std::move(ranks));
      continue;
    }
    if (!op.empty()) {  // rank <, <=, >, >= a constant
      const __int128 k = v.bigintValue();
      if (op == ">=") rank_from = std::max(rank_from, k);
      if (op == ">") rank_from = std::max(rank_from, k + 1);
      if (op == "<=") rank_to = std::min(rank_to, k + 1);
      if (op == "<") rank_to = std::min(rank_to, k);
      rank_bounds.push_back(rest.size());
      rest.push_back(std::move(c));
      continue;
    }
    if (!(op = matchComparison(*c, step, LogicalType::kBigInt, &v)).empty()) {
      __int128 k = v.bigintValue();
      if (op == "=" || op == ">=") p.from_step = std::max(p.from_step, clampStep(k));
      if (op == ">") p.from_step = std::max(p.from_step, clampStep(k + 1));
      if (op == "=" || op == "<=") p.to_step = std::min(p.to_step, clampStep(k + 1));
      if (op == "<") p.to_step = std::min(p.to_step, clampStep(k));
      continue;
    }
    rest.push_back(std::move(c));
  }
  // A range of ranks goes into the scan as its list of ranks (the store lists them as one
  // run) when it is at most kMaxPushedRankRange wide; a wider one (rank > 100 alone) stays a filter.
  if (!rank_bounds.empty() && rank_to - rank_from <= static_cast<__int128>(kMaxPushedRankRange)) {
    std::vector<uint32_t> ranks;
    for (__int128 r = rank_from; r < rank_to; ++r) ranks.push_back(static_cast<uint32_t>(r));
    restrict(&p.ranks_restricted, &p.ranks, std::move(ranks));
    for (auto at = rank_bounds.rbegin(); at != rank_bounds.rend(); ++at) rest.erase(rest.begin() + static_cast<ptrdiff_t>(*at));
  }
  *where = joinConjuncts(std::move(rest));
  return p;
}

}  // namespace argus::query
