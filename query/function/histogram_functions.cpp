// Histogram functions (kernels.hist, hist_merge results): quantile(h, q) -> DOUBLE ns within
// the sketch's relative error (1%), hist_count(h) -> BIGINT, hist_total(h) -> BIGINT (the
// sketch's total: sum of bucket representatives times counts, within 1% of the exact sum).
#include <cmath>

#include "query/function/function_registry.h"

namespace argus::query {

namespace {

using L = LogicalType;
using Hist = const model::DurationHistogram*;

void checkQuantile(double q, const FunctionContext& ctx) {
  if (!(q >= 0 && q <= 1)) throw ExecutionError(ctx.pos, "quantile(): q must be between 0 and 1, got " + doubleText(q));
}

void quantileKernel(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext& ctx) {
  binaryLoop<Hist, double, double>(*a[0], *a[1], n, out, [&](Hist h, double q, size_t i) -> double {
    if (!out.isValid(i)) return 0;
    checkQuantile(q, ctx);
    if (h->empty()) {
      out.setNull(i);
      return 0;
    }
    return h->quantile(q);
  });
}

void countKernel(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  unaryLoop<Hist, int64_t>(*a[0], n, out, [&](Hist h, size_t i) -> int64_t { return out.isValid(i) ? static_cast<int64_t>(h->count()) : 0; });
}

void totalKernel(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  unaryLoop<Hist, int64_t>(*a[0], n, out, [&](Hist h, size_t i) -> int64_t { return out.isValid(i) ? h->sketchTotal() : 0; });
}

}  // namespace

void registerHistogramFunctions(FunctionRegistry& r) {
  r.add(ScalarFunction{"quantile", {L::kHistogram, L::kDouble}, L::kDouble, quantileKernel});
  r.add(ScalarFunction{"hist_count", {L::kHistogram}, L::kBigInt, countKernel});
  r.add(ScalarFunction{"hist_total", {L::kHistogram}, L::kBigInt, totalKernel});
}

}  // namespace argus::query
