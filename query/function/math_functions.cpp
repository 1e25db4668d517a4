// Numeric functions: abs, sign, round, floor, ceil, sqrt, exp, ln, log10, log2, power,
// isnan, pi; and the type-generic greatest, least, coalesce, nullif.
#include <cmath>

#include "query/function/function_registry.h"

namespace argus::query {

namespace {

using L = LogicalType;

std::string numberText(double v) { return doubleText(v); }

void absBigint(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext& ctx) {
  unaryLoop<int64_t, int64_t>(*a[0], n, out, [&](int64_t x, size_t i) -> int64_t {
    if (x == INT64_MIN) {
      if (out.isValid(i)) throw ExecutionError(ctx.pos, "BIGINT overflow in abs()");
      return 0;
    }
    return x < 0 ? -x : x;
  });
}
void absDouble(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  unaryLoop<double, double>(*a[0], n, out, [](double x, size_t) { return std::fabs(x); });
}
void signBigint(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  unaryLoop<int64_t, int64_t>(*a[0], n, out, [](int64_t x, size_t) -> int64_t { return (x > 0) - (x < 0); });
}
void signDouble(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  unaryLoop<double, int64_t>(*a[0], n, out, [](double x, size_t) -> int64_t { return (x > 0) - (x < 0); });
}
void identityBigint(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  unaryLoop<int64_t, int64_t>(*a[0], n, out, [](int64_t x, size_t) { return x; });
}

template <double (*F)(double)>
void unaryDouble(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  unaryLoop<double, double>(*a[0], n, out, [](double x, size_t) { return F(x); });
}
double roundHalfAway(double x) { return std::round(x); }
double floorD(double x) { return std::floor(x); }
double ceilD(double x) { return std::ceil(x); }
double expD(double x) { return std::exp(x); }

void roundDigits(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  binaryLoop<double, int64_t, double>(*a[0], *a[1], n, out, [](double x, int64_t d, size_t) {
    if (d > 300 || !std::isfinite(x)) return x;
    if (d < -300) return 0.0;
    double scale = std::pow(10.0, static_cast<double>(d));
    double r = std::round(x * scale) / scale;
    return std::isfinite(r) ? r : x;
  });
}

// Functions defined on part of the real line: outside it, an ExecutionError naming the value.
template <double (*F)(double), bool (*Ok)(double)>
void domainDouble(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext& ctx) {
  unaryLoop<double, double>(*a[0], n, out, [&](double x, size_t i) {
    if (!Ok(x) && out.isValid(i)) throw ExecutionError(ctx.pos, std::string(ctx.name) + "() of " + numberText(x) + " is undefined");
    return F(x);
  });
}
double sqrtD(double x) { return std::sqrt(x); }
double lnD(double x) { return std::log(x); }
double log10D(double x) { return std::log10(x); }
double log2D(double x) { return std::log2(x); }
bool nonNegative(double x) { return !(x < 0); }
bool positive(double x) { return x > 0 || std::isnan(x); }

void powerDouble(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  binaryLoop<double, double, double>(*a[0], *a[1], n, out, [](double x, double y, size_t) { return std::pow(x, y); });
}
void isnanDouble(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  unaryLoop<double, uint8_t>(*a[0], n, out, [](double x, size_t) -> uint8_t { return std::isnan(x); });
}
void piKernel(const Vector* const*, size_t, size_t n, Vector& out, const FunctionContext&) {
  for (size_t i = 0; i < n; ++i) out.f64[i] = M_PI;
}

// greatest/least: NULL arguments are ignored; NULL only when every argument is.
template <typename T, bool kGreatest>
void extremum(const Vector* const* a, size_t nargs, size_t n, Vector& out, const FunctionContext&) {
  auto& o = out.data<T>();
  for (size_t i = 0; i < n; ++i) {
    bool found = false;
    T best{};
    for (size_t k = 0; k < nargs; ++k) {
      if (!a[k]->isValid(i)) continue;
      const T& v = at<T>(*a[k], i);
      bool better;
      if constexpr (std::is_same_v<T, double>) {
        // NaN is the greatest double.
        better = kGreatest ? (std::isnan(v) || (!std::isnan(best) && v > best)) : (!std::isnan(v) && (std::isnan(best) || v < best));
      } else {
        better = kGreatest ? v > best : v < best;
      }
      if (!found || better) best = v;
      found = true;
    }
    o[i] = best;
    if (!found) out.setNull(i);
  }
}
template <bool kGreatest>
void extremumId(const Vector* const* a, size_t nargs, size_t n, Vector& out, const FunctionContext&) {
  for (size_t i = 0; i < n; ++i) {
    bool found = false;
    uint64_t best = 0;
    for (size_t k = 0; k < nargs; ++k) {
      if (!a[k]->isValid(i)) continue;
      uint64_t v = static_cast<uint64_t>(at<int64_t>(*a[k], i));
      if (!found || (kGreatest ? v > best : v < best)) best = v;
      found = true;
    }
    out.i64[i] = static_cast<int64_t>(best);
    if (!found) out.setNull(i);
  }
}

template <typename T>
void coalesce(const Vector* const* a, size_t nargs, size_t n, Vector& out, const FunctionContext&) {
  auto& o = out.data<T>();
  for (size_t i = 0; i < n; ++i) {
    size_t k = 0;
    while (k < nargs && !a[k]->isValid(i)) ++k;
    if (k == nargs) {
      o[i] = T{};
      out.setNull(i);
    } else {
      o[i] = at<T>(*a[k], i);
    }
  }
}

template <typename T>
void nullif(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  auto& o = out.data<T>();
  for (size_t i = 0; i < n; ++i) {
    const T& x = at<T>(*a[0], i);
    o[i] = x;
    if (!a[0]->isValid(i)) {
      out.setNull(i);
      continue;
    }
    bool equal;
    if constexpr (std::is_same_v<T, double>) {
      const double y = at<double>(*a[1], i);
      equal = x == y || (std::isnan(x) && std::isnan(y));
    } else {
      equal = x == at<T>(*a[1], i);
    }
    if (a[1]->isValid(i) && equal) out.setNull(i);
  }
}

template <typename T>
void addGeneric(FunctionRegistry& r, L type) {
  ScalarFunction c{"coalesce", {type}, type, coalesce<T>, type, true};
  r.add(c);
  if (type != L::kHistogram) r.add(ScalarFunction{"nullif", {type, type}, type, nullif<T>, L::kNull, true});
}

}  // namespace

void registerMathFunctions(FunctionRegistry& r) {
  r.add(ScalarFunction{"abs", {L::kBigInt}, L::kBigInt, absBigint});
  r.add(ScalarFunction{"abs", {L::kDouble}, L::kDouble, absDouble});
  r.add(ScalarFunction{"sign", {L::kBigInt}, L::kBigInt, signBigint});
  r.add(ScalarFunction{"sign", {L::kDouble}, L::kBigInt, signDouble});
  r.add(ScalarFunction{"round", {L::kBigInt}, L::kBigInt, identityBigint});
  r.add(ScalarFunction{"round", {L::kDouble}, L::kDouble, unaryDouble<roundHalfAway>});
  r.add(ScalarFunction{"round", {L::kDouble, L::kBigInt}, L::kDouble, roundDigits});
  r.add(ScalarFunction{"floor", {L::kBigInt}, L::kBigInt, identityBigint});
  r.add(ScalarFunction{"floor", {L::kDouble}, L::kDouble, unaryDouble<floorD>});
  r.add(ScalarFunction{"ceil", {L::kBigInt}, L::kBigInt, identityBigint});
  r.add(ScalarFunction{"ceil", {L::kDouble}, L::kDouble, unaryDouble<ceilD>});
  r.add(ScalarFunction{"ceiling", {L::kDouble}, L::kDouble, unaryDouble<ceilD>});
  r.add(ScalarFunction{"sqrt", {L::kDouble}, L::kDouble, domainDouble<sqrtD, nonNegative>});
  r.add(ScalarFunction{"exp", {L::kDouble}, L::kDouble, unaryDouble<expD>});
  r.add(ScalarFunction{"ln", {L::kDouble}, L::kDouble, domainDouble<lnD, positive>});
  r.add(ScalarFunction{"log10", {L::kDouble}, L::kDouble, domainDouble<log10D, positive>});
  r.add(ScalarFunction{"log2", {L::kDouble}, L::kDouble, domainDouble<log2D, positive>});
  r.add(ScalarFunction{"power", {L::kDouble, L::kDouble}, L::kDouble, powerDouble});
  r.add(ScalarFunction{"pow", {L::kDouble, L::kDouble}, L::kDouble, powerDouble});
  r.add(ScalarFunction{"isnan", {L::kDouble}, L::kBoolean, isnanDouble});
  r.add(ScalarFunction{"pi", {}, L::kDouble, piKernel});

  r.add(ScalarFunction{"greatest", {L::kBigInt}, L::kBigInt, extremum<int64_t, true>, L::kBigInt, true});
  r.add(ScalarFunction{"greatest", {L::kDouble}, L::kDouble, extremum<double, true>, L::kDouble, true});
  r.add(ScalarFunction{"greatest", {L::kVarchar}, L::kVarchar, extremum<std::string_view, true>, L::kVarchar, true});
  r.add(ScalarFunction{"greatest", {L::kId}, L::kId, extremumId<true>, L::kId, true});
  r.add(ScalarFunction{"least", {L::kBigInt}, L::kBigInt, extremum<int64_t, false>, L::kBigInt, true});
  r.add(ScalarFunction{"least", {L::kDouble}, L::kDouble, extremum<double, false>, L::kDouble, true});
  r.add(ScalarFunction{"least", {L::kVarchar}, L::kVarchar, extremum<std::string_view, false>, L::kVarchar, true});
  r.add(ScalarFunction{"least", {L::kId}, L::kId, extremumId<false>, L::kId, true});

  addGeneric<int64_t>(r, L::kBigInt);
  addGeneric<double>(r, L::kDouble);
  addGeneric<std::string_view>(r, L::kVarchar);
  addGeneric<uint8_t>(r, L::kBoolean);
  addGeneric<int64_t>(r, L::kId);
  addGeneric<const model::DurationHistogram*>(r, L::kHistogram);
}

}  // namespace argus::query
