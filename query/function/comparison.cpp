// Comparison operators = <> < <= > >= on BIGINT, DOUBLE, VARCHAR (bytewise), BOOLEAN and ID
// (unsigned). DOUBLE compares in a total order in which NaN equals NaN and is greater than
// every other value (as PostgreSQL and DuckDB do), so grouping, sorting and comparing agree.
#include <cmath>
#include <string_view>

#include "query/function/function_registry.h"

namespace argus::query {

namespace {

using L = LogicalType;

// Three-way comparisons: negative, zero, positive.
inline int cmp(int64_t a, int64_t b) { return (a > b) - (a < b); }
inline int cmpId(int64_t a, int64_t b) {
  uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
  return (x > y) - (x < y);
}
inline int cmp(double a, double b) {
  bool an = std::isnan(a), bn = std::isnan(b);
  if (an || bn) return an - bn;
  return (a > b) - (a < b);
}
inline int cmp(std::string_view a, std::string_view b) {
  int c = a.compare(b);
  return (c > 0) - (c < 0);
}
inline int cmp(uint8_t a, uint8_t b) { return (a > b) - (a < b); }

struct Eq { static bool test(int c) { return c == 0; } };
struct Ne { static bool test(int c) { return c != 0; } };
struct Lt { static bool test(int c) { return c < 0; } };
struct Le { static bool test(int c) { return c <= 0; } };
struct Gt { static bool test(int c) { return c > 0; } };
struct Ge { static bool test(int c) { return c >= 0; } };

template <typename T, typename Pred>
void compareKernel(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  binaryLoop<T, T, uint8_t>(*a[0], *a[1], n, out, [](T x, T y, size_t) -> uint8_t { return Pred::test(cmp(x, y)); });
}

// Plain integer comparisons vectorize; keep them free of the three-way step.
template <typename Pred>
void compareBigint(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  binaryLoop<int64_t, int64_t, uint8_t>(*a[0], *a[1], n, out, [](int64_t x, int64_t y, size_t) -> uint8_t {
    if constexpr (std::is_same_v<Pred, Eq>) return x == y;
    if constexpr (std::is_same_v<Pred, Ne>) return x != y;
    if constexpr (std::is_same_v<Pred, Lt>) return x < y;
    if constexpr (std::is_same_v<Pred, Le>) return x <= y;
    if constexpr (std::is_same_v<Pred, Gt>) return x > y;
    return x >= y;
  });
}

template <typename Pred>
void compareId(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  binaryLoop<int64_t, int64_t, uint8_t>(*a[0], *a[1], n, out, [](int64_t x, int64_t y, size_t) -> uint8_t { return Pred::test(cmpId(x, y)); });
}

template <typename Pred>
void addAll(FunctionRegistry& r, const char* name) {
  r.add(ScalarFunction{name, {L::kBigInt, L::kBigInt}, L::kBoolean, compareBigint<Pred>});
  r.add(ScalarFunction{name, {L::kDouble, L::kDouble}, L::kBoolean, compareKernel<double, Pred>});
  r.add(ScalarFunction{name, {L::kVarchar, L::kVarchar}, L::kBoolean, compareKernel<std::string_view, Pred>});
  r.add(ScalarFunction{name, {L::kBoolean, L::kBoolean}, L::kBoolean, compareKernel<uint8_t, Pred>});
  r.add(ScalarFunction{name, {L::kId, L::kId}, L::kBoolean, compareId<Pred>});
}

}  // namespace

void registerComparison(FunctionRegistry& r) {
  addAll<Eq>(r, "=");
  addAll<Ne>(r, "<>");
  addAll<Lt>(r, "<");
  addAll<Le>(r, "<=");
  addAll<Gt>(r, ">");
  addAll<Ge>(r, ">=");
}

}  // namespace argus::query
