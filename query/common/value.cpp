#include "query/common/value.h"

#include <charconv>
#include <cmath>

namespace argus::query {

Value Value::null(LogicalType type) {
  Value v;
  v.type_ = type;
  return v;
}

Value Value::boolean(bool b) {
  Value v;
  v.type_ = LogicalType::kBoolean;
  v.null_ = false;
  v.i_ = b ? 1 : 0;
  return v;
}

Value Value::bigint(int64_t i) {
  Value v;
  v.type_ = LogicalType::kBigInt;
  v.null_ = false;
  v.i_ = i;
  return v;
}

Value Value::dbl(double d) {
  Value v;
  v.type_ = LogicalType::kDouble;
  v.null_ = false;
  v.d_ = d;
  return v;
}

Value Value::varchar(std::string s) {
  Value v;
  v.type_ = LogicalType::kVarchar;
  v.null_ = false;
  v.s_ = std::move(s);
  return v;
}

Value Value::id(uint64_t i) {
  Value v;
  v.type_ = LogicalType::kId;
  v.null_ = false;
  v.i_ = static_cast<int64_t>(i);
  return v;
}

std::string doubleText(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, p);
}

std::string Value::toSql() const {
  if (null_) return "NULL";
  switch (type_) {
    case LogicalType::kNull: return "NULL";
    case LogicalType::kBoolean: return i_ ? "TRUE" : "FALSE";
    case LogicalType::kBigInt: return std::to_string(i_);
    case LogicalType::kId: return std::to_string(static_cast<uint64_t>(i_));
    case LogicalType::kDouble: {
      std::string t = doubleText(d_);
      if (t == "nan" || t == "inf" || t == "-inf") return "CAST('" + t + "' AS DOUBLE)";
      if (t.find_first_of(".en") == std::string::npos) t += ".0";
      return t;
    }
    case LogicalType::kVarchar: {
      std::string out = "'";
      for (char c : s_) {
        if (c == '\'') out.push_back('\'');
        out.push_back(c);
      }
      return out + "'";
    }
    case LogicalType::kHistogram: return "<histogram>";
  }
  return "?";
}

bool Value::operator==(const Value& o) const {
  if (type_ != o.type_ || null_ != o.null_) return false;
  if (null_) return true;
  switch (type_) {
    case LogicalType::kDouble: return d_ == o.d_ || (std::isnan(d_) && std::isnan(o.d_));
    case LogicalType::kVarchar: return s_ == o.s_;
    default: return i_ == o.i_;
  }
}

}  // namespace argus::query
