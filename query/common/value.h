// Value: one scalar of any logical type. Used for constants in plans and for single cells
// handed to people (EXPLAIN text, tests); columns of values travel in Vectors instead.
#pragma once

#include <cstdint>
#include <string>

#include "query/common/types.h"

namespace argus::query {

class Value {
 public:
  Value() = default;  // NULL of type kNull
  static Value null(LogicalType type = LogicalType::kNull);
  static Value boolean(bool v);
  static Value bigint(int64_t v);
  static Value dbl(double v);
  static Value varchar(std::string v);
  static Value id(uint64_t v);

  LogicalType type() const { return type_; }
  bool isNull() const { return null_; }
  bool boolValue() const { return i_ != 0; }
  int64_t bigintValue() const { return i_; }
  uint64_t idValue() const { return static_cast<uint64_t>(i_); }
  double doubleValue() const { return d_; }
  const std::string& stringValue() const { return s_; }

  // SQL text of the value: NULL, TRUE, 42, 1.5, 'it''s'. IDs print as unsigned decimals.
  std::string toSql() const;
  bool operator==(const Value& o) const;

 private:
  LogicalType type_ = LogicalType::kNull;
  bool null_ = true;
  int64_t i_ = 0;  // kBoolean, kBigInt, kId (bit-cast)
  double d_ = 0;
  std::string s_;
};

// Shortest text that reads back as the same double ("0.1", "1e+20", "nan", "inf").
std::string doubleText(double v);

}  // namespace argus::query
