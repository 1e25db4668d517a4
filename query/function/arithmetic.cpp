// Arithmetic operators: + - * / // % and unary minus. BIGINT arithmetic is checked: an
// overflow is an ExecutionError naming the operator's position. '/' always divides as
// DOUBLE; '//' is integer (floor for DOUBLE) division. Division or modulo by zero gives
// NULL (the row is unknown, not the query wrong).
#include <cmath>

#include "query/function/function_registry.h"

namespace argus::query {

namespace {

using L = LogicalType;

[[noreturn]] void overflow(const FunctionContext& ctx) {
  throw ExecutionError(ctx.pos, std::string("BIGINT overflow in '") + ctx.name + "'");
}

template <typename Op>
void checkedBigint(const Vector* const* a, size_t n, Vector& out, const FunctionContext& ctx, Op op) {
  bool bad = false;
  binaryLoop<int64_t, int64_t, int64_t>(*a[0], *a[1], n, out, [&](int64_t x, int64_t y, size_t) {
    int64_t r;
    bad |= op(x, y, &r);
    return r;
  });
  if (bad) {
    // Overflow somewhere: it counts only on a row that is not NULL.
    for (size_t i = 0; i < n; ++i) {
      int64_t r;
      if (out.isValid(i) && op(at<int64_t>(*a[0], i), at<int64_t>(*a[1], i), &r)) overflow(ctx);
    }
  }
}

void addBigint(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext& ctx) {
  checkedBigint(a, n, out, ctx, [](int64_t x, int64_t y, int64_t* r) { return __builtin_add_overflow(x, y, r); });
}
void subBigint(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext& ctx) {
  checkedBigint(a, n, out, ctx, [](int64_t x, int64_t y, int64_t* r) { return __builtin_sub_overflow(x, y, r); });
}
void mulBigint(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext& ctx) {
  checkedBigint(a, n, out, ctx, [](int64_t x, int64_t y, int64_t* r) { return __builtin_mul_overflow(x, y, r); });
}

void addDouble(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  binaryLoop<double, double, double>(*a[0], *a[1], n, out, [](double x, double y, size_t) { return x + y; });
}
void subDouble(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  binaryLoop<double, double, double>(*a[0], *a[1], n, out, [](double x, double y, size_t) { return x - y; });
}
void mulDouble(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  binaryLoop<double, double, double>(*a[0], *a[1], n, out, [](double x, double y, size_t) { return x * y; });
}

// Marks the rows whose divisor is zero NULL.
template <typename T>
void nullOnZeroDivisor(const Vector& divisor, size_t n, Vector& out) {
  for (size_t i = 0; i < n; ++i) {
    if (at<T>(divisor, i) == T{0} && out.isValid(i)) out.setNull(i);
  }
}

void divDouble(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  binaryLoop<double, double, double>(*a[0], *a[1], n, out, [](double x, double y, size_t) { return y == 0 ? 0.0 : x / y; });
  nullOnZeroDivisor<double>(*a[1], n, out);
}

void intDivBigint(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext& ctx) {
  bool bad = false;
  binaryLoop<int64_t, int64_t, int64_t>(*a[0], *a[1], n, out, [&](int64_t x, int64_t y, size_t) -> int64_t {
    if (y == 0) return 0;
    if (y == -1) {
      bad |= x == INT64_MIN;
      return x == INT64_MIN ? 0 : -x;
    }
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) --q;  // floor, like '//' on DOUBLE
    return q;
  });
  nullOnZeroDivisor<int64_t>(*a[1], n, out);
  if (bad) {
    for (size_t i = 0; i < n; ++i) {
      if (out.isValid(i) && at<int64_t>(*a[0], i) == INT64_MIN && at<int64_t>(*a[1], i) == -1) overflow(ctx);
    }
  }
}

void intDivDouble(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  binaryLoop<double, double, double>(*a[0], *a[1], n, out, [](double x, double y, size_t) { return y == 0 ? 0.0 : std::floor(x / y); });
  nullOnZeroDivisor<double>(*a[1], n, out);
}

void modBigint(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  // Sign of the dividend, like C and PostgreSQL; INT64_MIN % -1 is 0.
  binaryLoop<int64_t, int64_t, int64_t>(*a[0], *a[1], n, out,
                                        [](int64_t x, int64_t y, size_t) -> int64_t { return (y == 0 || y == -1) ? 0 : x % y; });
  nullOnZeroDivisor<int64_t>(*a[1], n, out);
}

void modDouble(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  binaryLoop<double, double, double>(*a[0], *a[1], n, out, [](double x, double y, size_t) { return y == 0 ? 0.0 : std::fmod(x, y); });
  nullOnZeroDivisor<double>(*a[1], n, out);
}

void negBigint(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext& ctx) {
  unaryLoop<int64_t, int64_t>(*a[0], n, out, [&](int64_t x, size_t i) -> int64_t {
    if (x == INT64_MIN) {
      if (out.isValid(i)) overflow(ctx);
      return 0;
    }
    return -x;
  });
}

void negDouble(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  unaryLoop<double, double>(*a[0], n, out, [](double x, size_t) { return -x; });
}

}  // namespace

void registerArithmetic(FunctionRegistry& r) {
  r.add(ScalarFunction{"+", {L::kBigInt, L::kBigInt}, L::kBigInt, addBigint});
  r.add(ScalarFunction{"+", {L::kDouble, L::kDouble}, L::kDouble, addDouble});
  r.add(ScalarFunction{"-", {L::kBigInt, L::kBigInt}, L::kBigInt, subBigint});
  r.add(ScalarFunction{"-", {L::kDouble, L::kDouble}, L::kDouble, subDouble});
  r.add(ScalarFunction{"-", {L::kBigInt}, L::kBigInt, negBigint});
  r.add(ScalarFunction{"-", {L::kDouble}, L::kDouble, negDouble});
  r.add(ScalarFunction{"*", {L::kBigInt, L::kBigInt}, L::kBigInt, mulBigint});
  r.add(ScalarFunction{"*", {L::kDouble, L::kDouble}, L::kDouble, mulDouble});
  r.add(ScalarFunction{"/", {L::kDouble, L::kDouble}, L::kDouble, divDouble});
  r.add(ScalarFunction{"//", {L::kBigInt, L::kBigInt}, L::kBigInt, intDivBigint});
  r.add(ScalarFunction{"//", {L::kDouble, L::kDouble}, L::kDouble, intDivDouble});
  r.add(ScalarFunction{"%", {L::kBigInt, L::kBigInt}, L::kBigInt, modBigint});
  r.add(ScalarFunction{"%", {L::kDouble, L::kDouble}, L::kDouble, modDouble});
}

}  // namespace argus::query
