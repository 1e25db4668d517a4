// Step windows (docs/query/language.md, "Step windows"): tumble(step, n), the start of the
// n-step window a step falls in; hop(step, size, slide), a GROUP BY key that puts a row into
// every window of `size` steps starting at a multiple of `slide` that holds it. The planner
// turns a hop() group key into HOP_EXPAND (query/execution/hop_expand.h), so hop's kernel
// never runs; the binder refuses hop() anywhere else and checks both functions' constants.
#include "query/function/function_registry.h"

namespace argus::query {

namespace {

using L = LogicalType;

// floor(x / n) * n. REQUIRES: n > 0.
bool windowStart(int64_t x, int64_t n, int64_t* out) {
  int64_t r = x % n;
  if (r < 0) r += n;
  return !__builtin_sub_overflow(x, r, out);
}

void tumble(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext& ctx) {
  binaryLoop<int64_t, int64_t, int64_t>(*a[0], *a[1], n, out, [&](int64_t x, int64_t w, size_t i) -> int64_t {
    int64_t s = 0;
    if (out.isValid(i) && (w <= 0 || !windowStart(x, w, &s))) {
      throw ExecutionError(ctx.pos, "tumble(" + std::to_string(x) + ", " + std::to_string(w) + ") is out of range");
    }
    return s;
  });
}

void hop(const Vector* const*, size_t, size_t, Vector&, const FunctionContext& ctx) {
  throw ExecutionError(ctx.pos, "BUG: hop() runs only as a GROUP BY key, through HOP_EXPAND");
}

}  // namespace

bool stepWindowStart(int64_t step, int64_t width, int64_t* start) { return windowStart(step, width, start); }

void registerStepWindows(FunctionRegistry& r) {
  r.add(ScalarFunction{"tumble", {L::kBigInt, L::kBigInt}, L::kBigInt, tumble});
  r.add(ScalarFunction{"hop", {L::kBigInt, L::kBigInt, L::kBigInt}, L::kBigInt, hop});
}

}  // namespace argus::query
