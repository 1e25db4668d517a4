// String functions: length, lower, upper, starts_with, substr, || (concatenation), LIKE; and the
// names of the coded columns: phase_name(kernels.phase), op_name(collectives.op),
// event_kind_name(events.kind).
#include <algorithm>
#include <cctype>
#include <cstring>

#include "model/step_record.h"
#include "query/function/function_registry.h"

namespace argus::query {

namespace {

using L = LogicalType;

void lengthKernel(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  unaryLoop<std::string_view, int64_t>(*a[0], n, out, [](std::string_view s, size_t) { return static_cast<int64_t>(s.size()); });
}

template <int (*F)(int)>
void caseKernel(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext& ctx) {
  std::string buf;
  unaryLoop<std::string_view, std::string_view>(*a[0], n, out, [&](std::string_view s, size_t) {
    buf.assign(s);
    for (char& c : buf) c = static_cast<char>(F(static_cast<unsigned char>(c)));
    return ctx.arena->copy(buf);
  });
}

void startsWith(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  binaryLoop<std::string_view, std::string_view, uint8_t>(*a[0], *a[1], n, out,
                                                          [](std::string_view s, std::string_view p, size_t) -> uint8_t { return s.starts_with(p); });
}

// SQL's substring by bytes, 1-based: the bytes at positions [start, start + length) that
// exist (standard SQL and PostgreSQL: a start before 1 still counts its positions).
std::string_view substrOf(std::string_view s, int64_t start, int64_t length) {
  const __int128 size = static_cast<__int128>(s.size());
  const __int128 first = std::max<__int128>(start, 1);
  const __int128 end = std::min<__int128>(static_cast<__int128>(start) + length, size + 1);  // 128 bits: no overflow
  if (first >= end) return {};
  return s.substr(static_cast<size_t>(first - 1), static_cast<size_t>(end - first));
}

void substrFrom(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  // To the end: from position max(start, 1), however far back start lies.
  binaryLoop<std::string_view, int64_t, std::string_view>(*a[0], *a[1], n, out, [](std::string_view s, int64_t start, size_t) {
    return substrOf(s, std::max<int64_t>(start, 1), INT64_MAX);
  });
}

void substrFor(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext& ctx) {
  std::string_view* o = out.data<std::string_view>().data();
  for (size_t i = 0; i < n; ++i) {
    if (!out.isValid(i)) continue;
    const int64_t length = at<int64_t>(*a[2], i);
    if (length < 0) throw ExecutionError(ctx.pos, std::string(ctx.name) + "() with a negative length (" + std::to_string(length) + ")");
    o[i] = substrOf(at<std::string_view>(*a[0], i), at<int64_t>(*a[1], i), length);
  }
}

void concat(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext& ctx) {
  std::string buf;
  binaryLoop<std::string_view, std::string_view, std::string_view>(*a[0], *a[1], n, out, [&](std::string_view x, std::string_view y, size_t) {
    buf.assign(x);
    buf.append(y);
    return ctx.arena->copy(buf);
  });
}

// SQL LIKE: '%' matches any run of bytes, '_' one byte; no escape character.
// Greedy with one backtrack point: O(len(s) * len(p)) at worst.
bool likeMatch(std::string_view s, std::string_view p) {
  size_t si = 0, pi = 0, star_p = std::string_view::npos, star_s = 0;
  while (si < s.size()) {
    if (pi < p.size() && (p[pi] == '_' || (p[pi] != '%' && p[pi] == s[si]))) {
      ++si;
      ++pi;
    } else if (pi < p.size() && p[pi] == '%') {
      star_p = pi++;
      star_s = si;
    } else if (star_p != std::string_view::npos) {
      pi = star_p + 1;
      si = ++star_s;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '%') ++pi;
  return pi == p.size();
}

void likeKernel(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  binaryLoop<std::string_view, std::string_view, uint8_t>(*a[0], *a[1], n, out,
                                                          [](std::string_view s, std::string_view p, size_t) -> uint8_t { return likeMatch(s, p); });
}

// Code -> name; codes outside the enum give NULL.
template <typename Enum, const char* (*Name)(Enum), int kMax>
void enumName(const Vector* const* a, size_t, size_t n, Vector& out, const FunctionContext&) {
  unaryLoop<int64_t, std::string_view>(*a[0], n, out, [&](int64_t v, size_t i) -> std::string_view {
    if (v < 0 || v > kMax) {
      if (out.isValid(i)) out.setNull(i);
      return {};
    }
    return Name(static_cast<Enum>(v));
  });
}

}  // namespace

bool sqlLike(std::string_view s, std::string_view pattern) { return likeMatch(s, pattern); }

void registerStringFunctions(FunctionRegistry& r) {
  r.add(ScalarFunction{"length", {L::kVarchar}, L::kBigInt, lengthKernel});
  r.add(ScalarFunction{"lower", {L::kVarchar}, L::kVarchar, caseKernel<std::tolower>});
  r.add(ScalarFunction{"upper", {L::kVarchar}, L::kVarchar, caseKernel<std::toupper>});
  r.add(ScalarFunction{"starts_with", {L::kVarchar, L::kVarchar}, L::kBoolean, startsWith});
  r.add(ScalarFunction{"substr", {L::kVarchar, L::kBigInt}, L::kVarchar, substrFrom});
  r.add(ScalarFunction{"substr", {L::kVarchar, L::kBigInt, L::kBigInt}, L::kVarchar, substrFor});
  r.add(ScalarFunction{"||", {L::kVarchar, L::kVarchar}, L::kVarchar, concat});
  r.add(ScalarFunction{"like", {L::kVarchar, L::kVarchar}, L::kBoolean, likeKernel});
  r.add(ScalarFunction{"phase_name", {L::kBigInt}, L::kVarchar, enumName<model::Phase, model::phaseName, 6>});
  r.add(ScalarFunction{"op_name", {L::kBigInt}, L::kVarchar, enumName<model::CollectiveOp, model::collectiveOpName, 10>});
  r.add(ScalarFunction{"event_kind_name", {L::kBigInt}, L::kVarchar, enumName<model::EventKind, model::eventKindName, 3>});
}

}  // namespace argus::query
