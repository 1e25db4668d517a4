// Scalar functions and operators (docs/query/language.md, "Functions"): one overload per
// argument-type list, each with a vectorized kernel that processes a whole chunk per call.
//
// Kernel contract: args[k] holds `count` rows, or is constant (one row for all); `out` has
// been reset to the return type with `count` rows and its validity already set to the AND of
// the arguments' (unless handles_nulls), and is constant when every argument is. The kernel
// writes every row's value; rows marked NULL may hold anything, so checks that throw (overflow,
// domain) must skip them. A kernel may mark further rows NULL (division by zero).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "query/common/arena.h"
#include "query/common/errors.h"
#include "query/common/vector.h"

namespace argus::query {

struct FunctionContext {
  SourcePos pos;     // the call's place in the query, for ExecutionError
  const char* name;  // the function or operator as written
  Arena* arena;      // owns strings and histograms the kernel creates (reset per chunk)
};

using ScalarKernel = void (*)(const Vector* const* args, size_t nargs, size_t count, Vector& out, const FunctionContext& ctx);

struct ScalarFunction {
  std::string name;
  std::vector<LogicalType> args;
  LogicalType ret = LogicalType::kNull;
  ScalarKernel kernel = nullptr;
  // Not kNull: the function takes args.size() or more arguments, the extra ones of this type.
  LogicalType variadic = LogicalType::kNull;
  bool handles_nulls = false;  // the kernel sets the output's validity itself (coalesce)
};

// Helpers for kernels. `op(a, b, i)` returns the value of row i.
template <typename A, typename R, typename Op>
inline void unaryLoop(const Vector& a, size_t n, Vector& out, Op&& op) {
  const A* ap = a.data<A>().data();
  R* o = out.data<R>().data();
  for (size_t i = 0; i < n; ++i) o[i] = op(ap[i], i);
}

template <typename A, typename B, typename R, typename Op>
inline void binaryLoop(const Vector& a, const Vector& b, size_t n, Vector& out, Op&& op) {
  const A* ap = a.data<A>().data();
  const B* bp = b.data<B>().data();
  R* o = out.data<R>().data();
  if (a.constant && !b.constant) {
    const A av = ap[0];
    for (size_t i = 0; i < n; ++i) o[i] = op(av, bp[i], i);
  } else if (!a.constant && b.constant) {
    const B bv = bp[0];
    for (size_t i = 0; i < n; ++i) o[i] = op(ap[i], bv, i);
  } else {
    for (size_t i = 0; i < n; ++i) o[i] = op(ap[i], bp[i], i);
  }
}

// Row i of a vector that may be constant.
template <typename T>
inline const T& at(const Vector& v, size_t i) {
  return v.data<T>()[v.constant ? 0 : i];
}

}  // namespace argus::query
