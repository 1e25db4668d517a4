// The window functions. Aggregates over frames slide: a frame's rows enter at its end and
// leave at its start, so a rolling aggregate over w rows costs O(1) (count, sum, avg; the
// variance family and zscore over BIGINT, from exact 128-bit sums) or O(w) word moves
// (order statistics, SlidingOrderStat) per row instead of a pass over the frame. The rest
// (min/max of VARCHAR, BOOLEAN, ID; hist_merge) feed each distinct frame to the aggregate's
// own state.
#include "query/function/window_functions.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "query/execution/sliding_order_stat.h"

namespace argus::query {

namespace {

using L = LogicalType;

// Deadline checks every this many rows of window work.
constexpr uint32_t kCheckEvery = 4096;

// dst row i = src row r (same type; src flat).
void copyCell(const Vector& src, size_t r, Vector& dst, size_t i) {
  if (!src.isValid(r) || src.type == L::kNull) {
    dst.setNull(i);
    return;
  }
  dispatchPhysical(src.type, [&](auto t) {
    using T = decltype(t);
    dst.data<T>()[i] = src.data<T>()[src.constant ? 0 : r];
  });
}

// Calls emit(position, acc) with acc holding exactly the frame of each position, in window
// order: rows enter at the frame's end and leave at its start (both only move forward
// within a partition). An Acc with rolling(p, s, e, m) takes over runs of positions whose
// frames each move one row on from the last's, [s, e) before the first (a rolling window once
// full), where its rolls() says it can: it computes and emits the m positions from p itself.
template <typename Acc, typename Emit>
void slide(const WindowLayout& l, QueryContext& ctx, Acc& acc, Emit&& emit) {
  uint32_t s = 0, e = 0, unchecked = kCheckEvery;
  for (uint32_t p = 0; p < l.size();) {
    if (unchecked >= kCheckEvery) {
      ctx.check();
      unchecked = 0;
    }
    const uint32_t fs = l.frame_start[p], fe = l.frame_end[p];
    if (p == l.partition_start[p] || fs >= e) {
      acc.clear();
      s = e = fs;
    }
    if constexpr (requires { acc.rolling(p, s, e, uint32_t{}); }) {
      if (acc.rolls() && s < e && fs == s + 1 && fe == e + 1) {
        const uint32_t limit = std::min<uint32_t>(kCheckEvery, static_cast<uint32_t>(l.size() - p));
        uint32_t m = 1;
        if (l.rows_offsets) {
          // Both bounds moved, so neither is clamped at p, nor later until the end (the
          // bound ahead) passes the partition's: no row to check (~16 instructions a row).
          const uint32_t pe = l.partition_end[p];
          m = std::min({limit, pe - p, pe - fe + 1});
        } else {
          while (m < limit && l.partition_start[p + m] != p + m && l.frame_start[p + m] == fs + m && l.frame_end[p + m] == fe + m) ++m;
        }
        acc.rolling(p, s, e, m);
        p += m, s += m, e += m, unchecked += m;
        continue;
      }
    }
    while (e < fe) acc.add(l.order[e++]);
    while (s < fs) acc.remove(l.order[s++]);
    emit(p, acc);
    ++p, ++unchecked;
  }
}

class RankingFunction final : public WindowFunction {
 public:
  explicit RankingFunction(WindowFunctionKind kind) : kind_(kind) {}
  void evaluate(const WindowLayout& l, const std::vector<const Vector*>&, Vector& out, Arena&, QueryContext&) override {
    out.reset(L::kBigInt, l.size());
    int64_t dense = 0;
    for (uint32_t p = 0; p < l.size(); ++p) {
      const uint32_t ps = l.partition_start[p];
      if (p == ps) dense = 0;
      if (kind_ == WindowFunctionKind::kRowNumber) {  // the layout has no peers for it
        out.i64[l.order[p]] = p - ps + 1;
        continue;
      }
      if (p == l.peer_start[p]) ++dense;
      out.i64[l.order[p]] = kind_ == WindowFunctionKind::kRank ? l.peer_start[p] - ps + 1 : dense;
    }
  }

 private:
  WindowFunctionKind kind_;
};

// lag(x, n, default) / lead(x, n, default): x n rows before / after in the partition.
class OffsetFunction final : public WindowFunction {
 public:
  OffsetFunction(const WindowCall& call, bool lead) : call_(call), lead_(lead) {}
  void evaluate(const WindowLayout& l, const std::vector<const Vector*>& args, Vector& out, Arena& arena, QueryContext&) override {
    const Vector& x = *args[0];
    const int64_t n = call_.constants.empty() ? 1 : call_.constants[0].bigintValue();
    Vector fallback;
    if (call_.constants.size() > 1 && !call_.constants[1].isNull()) {
      fallback.setConstant(call_.constants[1]);
      if (call_.type == L::kVarchar) fallback.str[0] = arena.copy(fallback.str[0]);  // outlives this function
    } else {
      fallback.setConstantNull(call_.type);
    }
    out.reset(call_.type, l.size());
    for (uint32_t p = 0; p < l.size(); ++p) {
      const int64_t q = lead_ ? int64_t{p} + n : int64_t{p} - n;
      if (q >= l.partition_start[p] && q < l.partition_end[p]) {
        copyCell(x, l.order[q], out, l.order[p]);
      } else {
        copyCell(fallback, 0, out, l.order[p]);
      }
    }
  }

 private:
  WindowCall call_;
  bool lead_;
};

// first_value(x) / last_value(x): x at the frame's first / last row; NULL for an empty frame.
class FrameValueFunction final : public WindowFunction {
 public:
  FrameValueFunction(L type, bool last) : type_(type), last_(last) {}
  void evaluate(const WindowLayout& l, const std::vector<const Vector*>& args, Vector& out, Arena&, QueryContext&) override {
    out.reset(type_, l.size());
    for (uint32_t p = 0; p < l.size(); ++p) {
      const uint32_t fs = l.frame_start[p], fe = l.frame_end[p];
      if (fs == fe) {
        out.setNull(l.order[p]);
      } else {
        copyCell(*args[0], l.order[last_ ? fe - 1 : fs], out, l.order[p]);
      }
    }
  }

 private:
  L type_;
  bool last_;
};

// count(*) and count(x).
class CountFunction final : public WindowFunction {
 public:
  void evaluate(const WindowLayout& l, const std::vector<const Vector*>& args, Vector& out, Arena&, QueryContext& ctx) override {
    struct Acc {
      const Vector* x;
      int64_t n = 0;
      void clear() { n = 0; }
      void add(uint32_t r) { n += !x || x->isValid(r); }
      void remove(uint32_t r) { n -= !x || x->isValid(r); }
    } acc{args.empty() ? nullptr : args[0]};
    out.reset(L::kBigInt, l.size());
    slide(l, ctx, acc, [&](uint32_t p, const Acc& a) { out.i64[l.order[p]] = a.n; });
  }
};

// sum and avg. BIGINT sums are exact in 128 bits (the frame's sum must fit a BIGINT);
// DOUBLE sums are compensated (Neumaier), so rows leaving a frame cancel what they added,
// with infinities and NaNs counted apart.
template <typename T>
class SumFunction final : public WindowFunction {
 public:
  SumFunction(bool avg, SourcePos pos) : avg_(avg), pos_(pos) {}
  void evaluate(const WindowLayout& l, const std::vector<const Vector*>& args, Vector& out, Arena&, QueryContext& ctx) override {
    struct Acc {
      const Vector& x;
      int64_t n = 0;
      __int128 isum = 0;
      double sum = 0, comp = 0;
      int64_t nan = 0, pinf = 0, ninf = 0;
      void clear() {
        n = nan = pinf = ninf = 0;
        isum = 0;
        sum = comp = 0;
      }
      void apply(uint32_t r, int sign) {
        if (!x.isValid(r)) return;
        n += sign;
        if constexpr (std::is_same_v<T, int64_t>) {
          isum += sign * static_cast<__int128>(x.i64[r]);
        } else {
          double v = x.f64[r];
          if (std::isnan(v)) {
            nan += sign;
          } else if (std::isinf(v)) {
            (v > 0 ? pinf : ninf) += sign;
          } else {
            v *= sign;
            double t = sum + v;
            comp += std::fabs(sum) >= std::fabs(v) ? (sum - t) + v : (v - t) + sum;
            sum = t;
          }
        }
      }
      void add(uint32_t r) { apply(r, 1); }
      void remove(uint32_t r) { apply(r, -1); }
      double total() const {
        if (nan > 0 || (pinf > 0 && ninf > 0)) return std::numeric_limits<double>::quiet_NaN();
        if (pinf > 0) return std::numeric_limits<double>::infinity();
        if (ninf > 0) return -std::numeric_limits<double>::infinity();
        return sum + comp;
      }
    } acc{*args[0]};
    out.reset(avg_ || std::is_same_v<T, double> ? L::kDouble : L::kBigInt, l.size());
    slide(l, ctx, acc, [&](uint32_t p, const Acc& a) {
      const uint32_t row = l.order[p];
      if (a.n == 0) {
        out.setNull(row);
      } else if constexpr (std::is_same_v<T, int64_t>) {
        if (avg_) {
          out.f64[row] = static_cast<double>(a.isum) / static_cast<double>(a.n);
        } else if (a.isum > INT64_MAX || a.isum < INT64_MIN) {
          throw ExecutionError(pos_, "BIGINT overflow in sum(); sum a DOUBLE instead (CAST(x AS DOUBLE))");
        } else {
          out.i64[row] = static_cast<int64_t>(a.isum);
        }
      } else {
        out.f64[row] = avg_ ? a.total() / static_cast<double>(a.n) : a.total();
      }
    });
  }

 private:
  bool avg_;
  SourcePos pos_;
};

// The frame's count, mean and sum of squared deviations (m2).
struct Moments {
  int64_t n = 0;
  double mean = 0, m2 = 0;
};

// Welford's pass over the frame's rows.
template <typename T>
Moments scanMoments(const WindowLayout& l, const Vector& x, uint32_t fs, uint32_t fe) {
  Moments m;
  for (uint32_t q = fs; q < fe; ++q) {
    const uint32_t r = l.order[q];
    if (!x.isValid(r)) continue;
    double v = static_cast<double>(x.data<T>()[r]);
    double d = v - m.mean;
    m.mean += d / static_cast<double>(++m.n);
    m.m2 += d * (v - m.mean);
  }
  return m;
}

// The variance family and zscore. BIGINT: exact sums of (x - ref) and (x - ref)^2 in 128
// bits slide in O(1), so a frame of equal values has a variance of exactly 0; should they
// overflow, the frame is scanned. DOUBLE: Welford's running moments while rows only enter;
// a frame that lost rows is scanned once (removing from Welford's moments drifts).
template <typename T>
class MomentsFunction final : public WindowFunction {
 public:
  enum class Out : uint8_t { kVarSamp, kVarPop, kStddevSamp, kStddevPop, kZscore };
  explicit MomentsFunction(Out what) : what_(what) {}
  void evaluate(const WindowLayout& l, const std::vector<const Vector*>& args, Vector& out, Arena&, QueryContext& ctx) override {
    const Vector& x = *args[0];
    struct Acc {
      const Vector& x;
      int64_t n = 0;
      // BIGINT
      bool exact = true, has_ref = false;
      int64_t ref = 0;
      __int128 s = 0, q = 0;
      // DOUBLE
      Moments w{};
      bool dirty = false;
      void clear() {
        n = 0;
        exact = true;
        has_ref = false;
        s = q = 0;
        w = Moments{};
        dirty = false;
      }
      void add(uint32_t r) {
        if (!x.isValid(r)) return;
        ++n;
        if constexpr (std::is_same_v<T, int64_t>) {
          if (!has_ref) {
            ref = x.i64[r];
            has_ref = true;
          }
          __int128 d = static_cast<__int128>(x.i64[r]) - ref, sq;
          s += d;
          exact = exact && !__builtin_mul_overflow(d, d, &sq) && !__builtin_add_overflow(q, sq, &q);
        } else {
          double v = x.f64[r];
          double d = v - w.mean;
          w.mean += d / static_cast<double>(++w.n);
          w.m2 += d * (v - w.mean);
        }
      }
      void remove(uint32_t r) {
        if (!x.isValid(r)) return;
        --n;
        if constexpr (std::is_same_v<T, int64_t>) {
          __int128 d = static_cast<__int128>(x.i64[r]) - ref;
          s -= d;
          if (exact) q -= d * d;
        } else {
          dirty = true;
        }
      }
    } acc{x};
    out.reset(L::kDouble, l.size());
    slide(l, ctx, acc, [&](uint32_t p, Acc& a) {
      const uint32_t row = l.order[p];
      Moments m;
      if constexpr (std::is_same_v<T, int64_t>) {
        __int128 nq, ss, num;
        if (a.exact && !__builtin_mul_overflow(static_cast<__int128>(a.n), a.q, &nq) && !__builtin_mul_overflow(a.s, a.s, &ss) &&
            !__builtin_sub_overflow(nq, ss, &num)) {
          // m2 = q - s^2 / n, as (n q - s^2) / n to stay exact until the division.
          m.n = a.n;
          m.mean = a.n ? static_cast<double>(a.ref) + static_cast<double>(a.s) / static_cast<double>(a.n) : 0;
          m.m2 = a.n ? static_cast<double>(num) / static_cast<double>(a.n) : 0;
        } else {
          m = scanMoments<T>(l, a.x, l.frame_start[p], l.frame_end[p]);
        }
      } else {
        if (a.dirty) {
          a.w = scanMoments<T>(l, a.x, l.frame_start[p], l.frame_end[p]);
          a.dirty = false;
        }
        m = a.w;
      }
      write(m, x, row, out);
    });
  }

 private:
  void write(const Moments& m, const Vector& x, uint32_t row, Vector& out) const {
    const bool sample = what_ != Out::kVarPop && what_ != Out::kStddevPop;
    if (m.n < (sample ? 2 : 1)) {
      out.setNull(row);
      return;
    }
    const double var = std::max(0.0, m.m2 / static_cast<double>(sample ? m.n - 1 : m.n));
    switch (what_) {
      case Out::kVarSamp:
      case Out::kVarPop: out.f64[row] = var; return;
      case Out::kStddevSamp:
      case Out::kStddevPop: out.f64[row] = std::sqrt(var); return;
      case Out::kZscore: {
        const double sd = std::sqrt(var);
        if (!x.isValid(row) || !(sd > 0)) {
          out.setNull(row);
          return;
        }
        out.f64[row] = (static_cast<double>(x.data<T>()[row]) - m.mean) / sd;
        return;
      }
    }
  }

  Out what_;
};

// median, quantile_cont, quantile_disc, min, max (BIGINT and DOUBLE) and mad over a
// SlidingOrderStat of the frame's values.
template <typename T>
class OrderStatFunction final : public WindowFunction {
 public:
  enum class Out : uint8_t { kCont, kDisc, kMin, kMax, kMad };
  OrderStatFunction(Out what, double q, L type) : what_(what), q_(q), type_(type) {}
  void evaluate(const WindowLayout& l, const std::vector<const Vector*>& args, Vector& out, Arena&, QueryContext& ctx) override {
    struct Acc {
      const Vector& x;
      SlidingOrderStat<T>& stat;
      const WindowLayout& l;
      Vector& out;
      bool cont;  // quantile_cont (median): its rolling rows run in one call
      double q;
      std::vector<T> entering, leaving;
      std::vector<double> results;
      void clear() { stat.clear(); }
      void add(uint32_t r) {
        if (x.isValid(r)) stat.insert(x.data<T>()[r]);
      }
      void remove(uint32_t r) {
        if (x.isValid(r)) stat.erase(x.data<T>()[r]);
      }
      // quantile_cont over a rolling frame of non-NULL values, m rows in one call.
      bool rolls() const { return cont && x.allValid(); }
      void rolling(uint32_t p, uint32_t s, uint32_t e, uint32_t m) {
        const T* xs = x.data<T>().data();
        if (l.identity) {  // positions are rows: no gather into entering/leaving, no scatter
          stat.slideCont(xs + e, xs + s, m, q, out.f64.data() + p);
          return;
        }
        entering.resize(m);
        leaving.resize(m);
        results.resize(m);
        for (uint32_t i = 0; i < m; ++i) {
          entering[i] = xs[l.order[e + i]];
          leaving[i] = xs[l.order[s + i]];
        }
        stat.slideCont(entering.data(), leaving.data(), m, q, results.data());
        for (uint32_t i = 0; i < m; ++i) out.f64[l.order[p + i]] = results[i];
      }
    } acc{*args[0], stat_, l, out, what_ == Out::kCont, q_, {}, {}, {}};
    const bool typed = what_ == Out::kDisc || what_ == Out::kMin || what_ == Out::kMax;
    out.reset(typed ? type_ : L::kDouble, l.size());
    slide(l, ctx, acc, [&](uint32_t p, Acc& a) {
      const uint32_t row = l.order[p];
      const size_t n = a.stat.size();
      if (n == 0) {
        out.setNull(row);
        return;
      }
      switch (what_) {
        case Out::kCont: out.f64[row] = a.stat.quantileCont(q_); return;
        case Out::kDisc: out.data<T>()[row] = a.stat.quantileDisc(q_); return;
        case Out::kMin: out.data<T>()[row] = a.stat.at(0); return;
        case Out::kMax: out.data<T>()[row] = a.stat.at(n - 1); return;
        case Out::kMad: out.f64[row] = a.stat.mad(); return;
      }
    });
  }

 private:
  Out what_;
  double q_;
  L type_;
  SlidingOrderStat<T> stat_;
};

// Any other aggregate: each distinct frame becomes a group of the aggregate's own state,
// fed the frame's rows (a whole-partition frame once, a sliding one row by row).
class AggregateFrameFunction final : public WindowFunction {
 public:
  explicit AggregateFrameFunction(const WindowCall& call) : call_(call) {}
  void evaluate(const WindowLayout& l, const std::vector<const Vector*>& args, Vector& out, Arena& arena, QueryContext& ctx) override {
    AggregateParams params{std::vector<Value>(call_.constants), call_.pos, call_.aggregate->name};
    std::unique_ptr<AggregateState> state = call_.aggregate->make(params);
    std::vector<uint32_t> group(l.size());
    std::vector<uint32_t> rows, groups;
    std::vector<Vector> scratch(args.size());
    std::vector<const Vector*> scratch_ptrs;
    for (Vector& v : scratch) scratch_ptrs.push_back(&v);
    uint32_t ngroups = 0;
    auto flush = [&] {
      if (rows.empty()) return;
      ctx.check();
      state->resize(ngroups);
      for (size_t a = 0; a < args.size(); ++a) gather(*args[a], rows.data(), rows.size(), scratch[a]);
      state->update(scratch_ptrs.data(), groups.data(), rows.size());
      rows.clear();
      groups.clear();
    };
    for (uint32_t p = 0; p < l.size(); ++p) {
      const bool same = p > l.partition_start[p] && l.frame_start[p] == l.frame_start[p - 1] && l.frame_end[p] == l.frame_end[p - 1];
      if (!same) {
        const uint32_t g = ngroups++;
        for (uint32_t q = l.frame_start[p]; q < l.frame_end[p]; ++q) {
          rows.push_back(l.order[q]);
          groups.push_back(g);
          if (rows.size() == kVectorSize) flush();
        }
      }
      group[p] = ngroups - 1;
    }
    flush();
    state->resize(ngroups);
    Vector results;
    state->finalize(ngroups, results, arena);
    out.reset(call_.type, l.size());
    for (uint32_t p = 0; p < l.size(); ++p) copyCell(results, group[p], out, l.order[p]);
  }

 private:
  WindowCall call_;
};

template <typename T>
std::unique_ptr<WindowFunction> makeTyped(const WindowCall& call, L type) {
  using OS = OrderStatFunction<T>;
  using M = MomentsFunction<T>;
  if (call.kind == WindowFunctionKind::kZscore) return std::make_unique<M>(M::Out::kZscore);
  if (call.kind == WindowFunctionKind::kMad) return std::make_unique<OS>(OS::Out::kMad, 0.5, type);
  const std::string& name = call.aggregate->name;
  const double q = call.constants.empty() ? 0.5 : call.constants[0].doubleValue();
  if (name == "sum" || name == "avg") return std::make_unique<SumFunction<T>>(name == "avg", call.pos);
  if (name == "stddev" || name == "stddev_samp") return std::make_unique<M>(M::Out::kStddevSamp);
  if (name == "stddev_pop") return std::make_unique<M>(M::Out::kStddevPop);
  if (name == "variance" || name == "var_samp") return std::make_unique<M>(M::Out::kVarSamp);
  if (name == "var_pop") return std::make_unique<M>(M::Out::kVarPop);
  if (name == "median" || name == "quantile" || name == "quantile_cont") return std::make_unique<OS>(OS::Out::kCont, q, type);
  if (name == "quantile_disc") return std::make_unique<OS>(OS::Out::kDisc, q, type);
  if (name == "min") return std::make_unique<OS>(OS::Out::kMin, q, type);
  if (name == "max") return std::make_unique<OS>(OS::Out::kMax, q, type);
  return std::make_unique<AggregateFrameFunction>(call);
}

}  // namespace

bool windowFunctionKind(std::string_view name, WindowFunctionKind* out) {
  using K = WindowFunctionKind;
  static const std::pair<std::string_view, K> kNames[] = {
      {"row_number", K::kRowNumber}, {"rank", K::kRank},         {"dense_rank", K::kDenseRank}, {"lag", K::kLag}, {"lead", K::kLead},
      {"first_value", K::kFirstValue}, {"last_value", K::kLastValue}, {"zscore", K::kZscore},      {"mad", K::kMad},
  };
  for (const auto& [n, k] : kNames) {
    if (n == name) {
      *out = k;
      return true;
    }
  }
  return false;
}

std::unique_ptr<WindowFunction> makeWindowFunction(const WindowCall& call, const std::vector<LogicalType>& arg_types) {
  using K = WindowFunctionKind;
  switch (call.kind) {
    case K::kRowNumber:
    case K::kRank:
    case K::kDenseRank: return std::make_unique<RankingFunction>(call.kind);
    case K::kLag:
    case K::kLead: return std::make_unique<OffsetFunction>(call, call.kind == K::kLead);
    case K::kFirstValue:
    case K::kLastValue: return std::make_unique<FrameValueFunction>(call.type, call.kind == K::kLastValue);
    case K::kZscore:
    case K::kMad:
    case K::kAggregate: break;
  }
  if (call.kind == K::kAggregate && call.aggregate->name == "count") return std::make_unique<CountFunction>();
  const L t = arg_types.empty() ? L::kNull : arg_types[0];
  if (t == L::kBigInt) return makeTyped<int64_t>(call, t);
  if (t == L::kDouble) return makeTyped<double>(call, t);
  return std::make_unique<AggregateFrameFunction>(call);
}

}  // namespace argus::query
