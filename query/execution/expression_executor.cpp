#include "query/execution/expression_executor.h"

#include <cassert>
#include <cmath>
#include <numeric>

#include "query/function/cast.h"

namespace argus::query {

namespace {
using L = LogicalType;
}  // namespace

struct ExpressionExecutor::State {
  const BoundExpr* expr = nullptr;
  std::vector<std::unique_ptr<State>> children;
  Vector result;
  Arena arena;  // strings made by this node; cleared per evaluation
  std::vector<const Vector*> args;
  std::vector<uint32_t> sel_a, sel_b, pos_a, pos_b, pos_match;
  bool constant_ready = false;

  explicit State(const BoundExpr& e) : expr(&e) {
    for (const auto& c : e.children) children.push_back(std::make_unique<State>(*c));
    args.resize(children.size());
  }
};

ExpressionExecutor::ExpressionExecutor(const BoundExpr& expr) : root_(std::make_unique<State>(expr)) {}
ExpressionExecutor::~ExpressionExecutor() = default;
ExpressionExecutor::ExpressionExecutor(ExpressionExecutor&&) noexcept = default;
ExpressionExecutor& ExpressionExecutor::operator=(ExpressionExecutor&&) noexcept = default;

const Vector& ExpressionExecutor::evaluate(const DataChunk& chunk) { return eval(*root_, chunk, chunk.selData(), chunk.size()); }

size_t ExpressionExecutor::select(const DataChunk& chunk, std::vector<uint32_t>& out) {
  out.resize(chunk.size());
  size_t n = selectRows(*root_, chunk, chunk.selData(), chunk.size(), out.data());
  out.resize(n);
  return n;
}

size_t ExpressionExecutor::selectRows(State& st, const DataChunk& chunk, const uint32_t* sel, size_t count, uint32_t* out) {
  const BoundExpr& e = *st.expr;
  if (e.kind == BoundExprKind::kAnd) {
    st.sel_a.resize(count);
    size_t k = selectRows(*st.children[0], chunk, sel, count, st.sel_a.data());
    if (k == 0) return 0;
    return selectRows(*st.children[1], chunk, st.sel_a.data(), k, out);
  }
  const Vector& v = eval(st, chunk, sel, count);
  if (v.constant) {
    if (!v.isValid(0) || !v.b8[0]) return 0;
    for (size_t i = 0; i < count; ++i) out[i] = sel ? sel[i] : static_cast<uint32_t>(i);
    return count;
  }
  size_t k = 0;
  const uint8_t* b = v.b8.data();
  if (v.validity.empty()) {
    if (sel) {
      for (size_t i = 0; i < count; ++i) {
        out[k] = sel[i];
        k += b[i];
      }
    } else {
      for (size_t i = 0; i < count; ++i) {
        out[k] = static_cast<uint32_t>(i);
        k += b[i];
      }
    }
    return k;
  }
  const uint8_t* valid = v.validity.data();
  for (size_t i = 0; i < count; ++i) {
    out[k] = sel ? sel[i] : static_cast<uint32_t>(i);
    k += b[i] & valid[i];
  }
  return k;
}

const Vector& ExpressionExecutor::eval(State& st, const DataChunk& chunk, const uint32_t* sel, size_t count) {
  const BoundExpr& e = *st.expr;
  switch (e.kind) {
    case BoundExprKind::kColumnRef: {
      const Vector& col = chunk.columns[e.column];
      if (col.constant || (sel == nullptr && count == chunk.rows)) return col;
      gather(col, sel, count, st.result);
      return st.result;
    }
    case BoundExprKind::kConstant:
      if (!st.constant_ready) {
        if (e.value.isNull()) {
          st.result.setConstantNull(e.type);
        } else {
          st.result.setConstant(e.value);
        }
        st.constant_ready = true;
      }
      return st.result;
    case BoundExprKind::kFunction: {
      const ScalarFunction& f = *e.function;
      bool all_constant = true;
      bool null_constant = false;
      for (size_t k = 0; k < st.children.size(); ++k) {
        const Vector& a = eval(*st.children[k], chunk, sel, count);
        st.args[k] = &a;
        all_constant = all_constant && a.constant;
        null_constant = null_constant || a.isConstantNull();
      }
      if (null_constant && !f.handles_nulls) {
        st.result.setConstantNull(e.type);
        return st.result;
      }
      size_t n = all_constant ? 1 : count;
      st.result.reset(e.type, n);
      st.result.constant = all_constant;
      if (!f.handles_nulls) {
        for (const Vector* a : st.args) {
          if (a->validity.empty() || a->constant) continue;
          if (st.result.validity.empty()) {
            st.result.validity = a->validity;
          } else {
            for (size_t i = 0; i < n; ++i) st.result.validity[i] &= a->validity[i];
          }
        }
      }
      st.arena.clear();
      FunctionContext ctx{e.pos, f.name.c_str(), &st.arena};
      f.kernel(st.args.data(), st.args.size(), n, st.result, ctx);
      return st.result;
    }
    case BoundExprKind::kAnd:
    case BoundExprKind::kOr: {
      const Vector& a = eval(*st.children[0], chunk, sel, count);
      const Vector& b = eval(*st.children[1], chunk, sel, count);
      evalLogical(st, a, b, count);
      return st.result;
    }
    case BoundExprKind::kNot: {
      const Vector& a = eval(*st.children[0], chunk, sel, count);
      size_t n = a.constant ? 1 : count;
      st.result.reset(L::kBoolean, n);
      st.result.constant = a.constant;
      st.result.validity = a.validity;
      for (size_t i = 0; i < n; ++i) st.result.b8[i] = !a.b8[i];
      return st.result;
    }
    case BoundExprKind::kIsNull: {
      const Vector& a = eval(*st.children[0], chunk, sel, count);
      size_t n = a.constant ? 1 : count;
      st.result.reset(L::kBoolean, n);
      st.result.constant = a.constant;
      for (size_t i = 0; i < n; ++i) st.result.b8[i] = a.isValid(i) == e.negated;
      return st.result;
    }
    case BoundExprKind::kCast: {
      const Vector& a = eval(*st.children[0], chunk, sel, count);
      st.arena.clear();
      castVector(a, e.type, count, st.result, e.pos, st.arena);
      return st.result;
    }
    case BoundExprKind::kCase: evalCase(st, chunk, sel, count); return st.result;
    case BoundExprKind::kIn: evalIn(st, chunk, sel, count); return st.result;
  }
  assert(false && "BUG: unknown bound expression kind");
  return st.result;
}

void ExpressionExecutor::evalLogical(State& st, const Vector& a, const Vector& b, size_t count) {
  bool is_and = st.expr->kind == BoundExprKind::kAnd;
  bool constant = a.constant && b.constant;
  size_t n = constant ? 1 : count;
  Vector& r = st.result;
  r.reset(L::kBoolean, n);
  r.constant = constant;
  if (a.allValid() && b.allValid()) {
    for (size_t i = 0; i < n; ++i) r.b8[i] = is_and ? (at<uint8_t>(a, i) & at<uint8_t>(b, i)) : (at<uint8_t>(a, i) | at<uint8_t>(b, i));
    return;
  }
  // Three-valued: FALSE AND NULL is FALSE, TRUE OR NULL is TRUE, otherwise NULL wins.
  for (size_t i = 0; i < n; ++i) {
    bool av = a.isValid(i), bv = b.isValid(i);
    uint8_t x = at<uint8_t>(a, i), y = at<uint8_t>(b, i);
    bool decided = is_and ? ((av && !x) || (bv && !y)) : ((av && x) || (bv && y));
    if (decided) {
      r.b8[i] = is_and ? 0 : 1;
    } else if (!av || !bv) {
      r.b8[i] = 0;
      r.setNull(i);
    } else {
      r.b8[i] = is_and ? 1 : 0;
    }
  }
}

namespace {

template <typename T>
bool equalValues(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, double>) {
    return a == b || (std::isnan(a) && std::isnan(b));
  } else {
    return a == b;
  }
}

// Copies rows of src (dense over `positions.size()` rows) into r at positions.
void scatter(const Vector& src, const std::vector<uint32_t>& positions, Vector& r) {
  dispatchPhysical(r.type, [&](auto tag) {
    using T = decltype(tag);
    auto& o = r.data<T>();
    for (size_t j = 0; j < positions.size(); ++j) o[positions[j]] = at<T>(src, j);
  });
  for (size_t j = 0; j < positions.size(); ++j) {
    if (!src.isValid(j)) r.setNull(positions[j]);
  }
}

}  // namespace

void ExpressionExecutor::evalCase(State& st, const DataChunk& chunk, const uint32_t* sel, size_t count) {
  const BoundExpr& e = *st.expr;
  Vector& r = st.result;
  if (e.type == L::kNull) {
    r.setConstantNull(L::kNull);
    return;
  }
  r.reset(e.type, count);
  dispatchPhysical(e.type, [&](auto tag) {
    using T = decltype(tag);
    std::fill(r.data<T>().begin(), r.data<T>().end(), T{});
  });
  // remaining: positions (0..count) still looking for a branch; sel_a their chunk rows.
  std::vector<uint32_t>& remaining = st.pos_a;
  remaining.resize(count);
  std::iota(remaining.begin(), remaining.end(), 0u);
  size_t pairs = (st.children.size() - (e.has_else ? 1 : 0)) / 2;
  for (size_t p = 0; p < pairs && !remaining.empty(); ++p) {
    st.sel_a.resize(remaining.size());
    for (size_t j = 0; j < remaining.size(); ++j) st.sel_a[j] = sel ? sel[remaining[j]] : remaining[j];
    const Vector& cond = eval(*st.children[2 * p], chunk, st.sel_a.data(), remaining.size());
    st.pos_match.clear();
    st.pos_b.clear();
    st.sel_b.clear();
    for (size_t j = 0; j < remaining.size(); ++j) {
      if (cond.isValid(j) && at<uint8_t>(cond, j)) {
        st.pos_match.push_back(remaining[j]);
        st.sel_b.push_back(st.sel_a[j]);
      } else {
        st.pos_b.push_back(remaining[j]);
      }
    }
    if (!st.pos_match.empty()) {
      const Vector& then = eval(*st.children[2 * p + 1], chunk, st.sel_b.data(), st.sel_b.size());
      scatter(then, st.pos_match, r);
    }
    remaining.swap(st.pos_b);
  }
  if (remaining.empty()) return;
  if (e.has_else) {
    st.sel_a.resize(remaining.size());
    for (size_t j = 0; j < remaining.size(); ++j) st.sel_a[j] = sel ? sel[remaining[j]] : remaining[j];
    const Vector& other = eval(*st.children.back(), chunk, st.sel_a.data(), remaining.size());
    scatter(other, remaining, r);
  } else {
    for (uint32_t p : remaining) r.setNull(p);
  }
}

void ExpressionExecutor::evalIn(State& st, const DataChunk& chunk, const uint32_t* sel, size_t count) {
  const BoundExpr& e = *st.expr;
  bool all_constant = true;
  for (size_t k = 0; k < st.children.size(); ++k) {
    st.args[k] = &eval(*st.children[k], chunk, sel, count);
    all_constant = all_constant && st.args[k]->constant;
  }
  size_t n = all_constant ? 1 : count;
  Vector& r = st.result;
  r.reset(L::kBoolean, n);
  r.constant = all_constant;
  const Vector& v = *st.args[0];
  dispatchPhysical(v.type, [&](auto tag) {
    using T = decltype(tag);
    for (size_t i = 0; i < n; ++i) {
      bool found = false;
      bool unknown = !v.isValid(i);
      if (!unknown) {
        const T& x = at<T>(v, i);
        for (size_t k = 1; k < st.args.size() && !found; ++k) {
          const Vector& item = *st.args[k];
          if (!item.isValid(i)) {
            unknown = true;
          } else if (equalValues(x, at<T>(item, i))) {
            found = true;
          }
        }
      }
      // x IN (...): TRUE if found; else NULL if x or an item is NULL; else FALSE.
      if (found) {
        r.b8[i] = e.negated ? 0 : 1;
      } else if (unknown) {
        r.b8[i] = 0;
        r.setNull(i);
      } else {
        r.b8[i] = e.negated ? 1 : 0;
      }
    }
  });
}

}  // namespace argus::query
