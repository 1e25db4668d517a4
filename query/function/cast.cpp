#include "query/function/cast.h"

#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "query/function/scalar_function.h"

namespace argus::query {

namespace {

using L = LogicalType;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string quoted(std::string_view s) {
  std::string out = "'";
  out.append(s.substr(0, 64));
  if (s.size() > 64) out += "...";
  return out + "'";
}

bool parseBigint(std::string_view s, int64_t* out) {
  s = trim(s);
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

bool parseId(std::string_view s, uint64_t* out) {
  s = trim(s);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

bool parseDouble(std::string_view s, double* out) {
  std::string t(trim(s));
  if (t.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size();
}

bool parseBool(std::string_view s, uint8_t* out) {
  std::string t(trim(s));
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "true" || t == "t" || t == "yes" || t == "y" || t == "1") {
    *out = 1;
  } else if (t == "false" || t == "f" || t == "no" || t == "n" || t == "0") {
    *out = 0;
  } else {
    return false;
  }
  return true;
}

// DOUBLE -> BIGINT rounds half away from zero; values outside int64 do not convert.
bool doubleToBigint(double d, int64_t* out) {
  double r = std::round(d);
  if (!(r >= -9223372036854775808.0 && r < 9223372036854775808.0)) return false;
  *out = static_cast<int64_t>(r);
  return true;
}

// Runs conv(row) -> bool for every valid row, writing into o; throws on a false.
template <typename In, typename Out, typename Conv>
void castLoop(const Vector& in, size_t n, Vector& out, SourcePos pos, L to, Conv&& conv) {
  const In* ip = in.data<In>().data();
  Out* op = out.data<Out>().data();
  for (size_t i = 0; i < n; ++i) {
    if (!out.isValid(i)) {
      op[i] = Out{};
      continue;
    }
    if (!conv(ip[i], &op[i])) {
      std::string v;
      if constexpr (std::is_same_v<In, std::string_view>) {
        v = quoted(ip[i]);
      } else if constexpr (std::is_same_v<In, double>) {
        v = doubleText(ip[i]);
      } else {
        v = in.type == L::kId ? std::to_string(static_cast<uint64_t>(ip[i])) : std::to_string(ip[i]);
      }
      throw ExecutionError(pos, std::string("cannot cast ") + v + " (" + typeName(in.type) + ") to " + typeName(to));
    }
  }
}

}  // namespace

bool canCast(LogicalType from, LogicalType to) {
  if (from == to || from == L::kNull) return true;
  if (from == L::kHistogram || to == L::kHistogram || to == L::kNull) return false;
  if (from == L::kDouble && to == L::kId) return false;
  if (from == L::kId && to == L::kBoolean) return false;
  if (from == L::kBoolean && to == L::kId) return false;
  return true;
}

void castVector(const Vector& in, LogicalType to, size_t count, Vector& out, SourcePos pos, Arena& arena) {
  assert(canCast(in.type, to) && "BUG: castVector on a cast the binder should have refused");
  size_t n = in.constant ? 1 : count;
  if (in.type == L::kNull || in.isConstantNull()) {
    out.setConstantNull(to);
    return;
  }
  if (in.type == to) {
    out = in;
    return;
  }
  out.reset(to, n);
  out.constant = in.constant;
  out.validity = in.validity;
  char buf[32];
  switch (in.type) {
    case L::kBoolean:
      if (to == L::kVarchar) {
        castLoop<uint8_t, std::string_view>(in, n, out, pos, to, [](uint8_t b, std::string_view* o) {
          *o = b ? "true" : "false";
          return true;
        });
      } else if (to == L::kDouble) {
        castLoop<uint8_t, double>(in, n, out, pos, to, [](uint8_t b, double* o) { *o = b; return true; });
      } else {
        castLoop<uint8_t, int64_t>(in, n, out, pos, to, [](uint8_t b, int64_t* o) { *o = b; return true; });
      }
      return;
    case L::kBigInt:
      if (to == L::kBoolean) {
        castLoop<int64_t, uint8_t>(in, n, out, pos, to, [](int64_t v, uint8_t* o) { *o = v != 0; return true; });
      } else if (to == L::kDouble) {
        castLoop<int64_t, double>(in, n, out, pos, to, [](int64_t v, double* o) { *o = static_cast<double>(v); return true; });
      } else if (to == L::kId) {
        castLoop<int64_t, int64_t>(in, n, out, pos, to, [](int64_t v, int64_t* o) { *o = v; return v >= 0; });
      } else {
        castLoop<int64_t, std::string_view>(in, n, out, pos, to, [&](int64_t v, std::string_view* o) {
          auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
          *o = arena.copy(std::string_view(buf, static_cast<size_t>(p - buf)));
          return true;
        });
      }
      return;
    case L::kId:
      if (to == L::kBigInt) {
        castLoop<int64_t, int64_t>(in, n, out, pos, to, [](int64_t v, int64_t* o) { *o = v; return v >= 0; });
      } else if (to == L::kDouble) {
        castLoop<int64_t, double>(in, n, out, pos, to, [](int64_t v, double* o) { *o = static_cast<double>(static_cast<uint64_t>(v)); return true; });
      } else {
        castLoop<int64_t, std::string_view>(in, n, out, pos, to, [&](int64_t v, std::string_view* o) {
          auto [p, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<uint64_t>(v));
          *o = arena.copy(std::string_view(buf, static_cast<size_t>(p - buf)));
          return true;
        });
      }
      return;
    case L::kDouble:
      if (to == L::kBoolean) {
        castLoop<double, uint8_t>(in, n, out, pos, to, [](double v, uint8_t* o) { *o = v != 0; return true; });
      } else if (to == L::kBigInt) {
        castLoop<double, int64_t>(in, n, out, pos, to, [](double v, int64_t* o) { return doubleToBigint(v, o); });
      } else {
        castLoop<double, std::string_view>(in, n, out, pos, to, [&](double v, std::string_view* o) {
          *o = arena.copy(doubleText(v));
          return true;
        });
      }
      return;
    case L::kVarchar:
      if (to == L::kBoolean) {
        castLoop<std::string_view, uint8_t>(in, n, out, pos, to, [](std::string_view s, uint8_t* o) { return parseBool(s, o); });
      } else if (to == L::kBigInt) {
        castLoop<std::string_view, int64_t>(in, n, out, pos, to, [](std::string_view s, int64_t* o) { return parseBigint(s, o); });
      } else if (to == L::kDouble) {
        castLoop<std::string_view, double>(in, n, out, pos, to, [](std::string_view s, double* o) { return parseDouble(s, o); });
      } else {
        castLoop<std::string_view, int64_t>(in, n, out, pos, to, [](std::string_view s, int64_t* o) {
          uint64_t u = 0;
          bool ok = parseId(s, &u);
          *o = static_cast<int64_t>(u);
          return ok;
        });
      }
      return;
    case L::kNull:
    case L::kHistogram: break;
  }
  assert(false && "BUG: unhandled cast");
}

bool tryCastValue(const Value& in, LogicalType to, Value* out, std::string* why) {
  if (in.isNull()) {
    *out = Value::null(to);
    return true;
  }
  if (!canCast(in.type(), to)) {
    *why = std::string("cannot cast ") + typeName(in.type()) + " to " + typeName(to);
    return false;
  }
  Vector v, o;
  v.setConstant(in);
  Arena arena;
  try {
    castVector(v, to, 1, o, SourcePos{}, arena);
  } catch (const ExecutionError& e) {
    *why = e.cause();
    return false;
  }
  *out = o.value(0);
  return true;
}

}  // namespace argus::query
