// Vector and DataChunk: the unit of vectorized execution (docs/query/language.md, "Engine").
//
// A Vector is one column of values of one LogicalType, stored in a typed array (int64 for
// BIGINT and ID, double, uint8 for BOOLEAN, string_view for VARCHAR, histogram pointers for
// HISTOGRAM) plus an optional validity array (empty: no NULLs). A constant vector holds one
// value that stands for every row (literals, the job column of a scan). Strings and
// histograms are views: whoever produced the chunk keeps their bytes alive until its next
// call to next(); materializing operators copy them into an Arena.
//
// A DataChunk is a set of equally long vectors plus an optional selection vector: filters
// narrow the selection instead of copying the columns.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/duration_histogram.h"
#include "query/common/arena.h"
#include "query/common/types.h"
#include "query/common/value.h"

namespace argus::query {

// Rows per chunk produced by scans and operators.
inline constexpr size_t kVectorSize = 2048;

struct Vector {
  LogicalType type = LogicalType::kNull;
  bool constant = false;
  std::vector<int64_t> i64;                             // kBigInt, kId (bit-cast uint64)
  std::vector<double> f64;                              // kDouble
  std::vector<uint8_t> b8;                              // kBoolean: 0 or 1
  std::vector<std::string_view> str;                    // kVarchar
  std::vector<const model::DurationHistogram*> hist;   // kHistogram
  std::vector<uint8_t> validity;                        // empty: all valid; else 1 = valid

  // A flat vector of n rows, all valid, values unspecified. Keeps buffer capacity.
  void reset(LogicalType t, size_t n);
  // A constant vector of v (its strings point into v: v must outlive the vector's use).
  void setConstant(const Value& v);
  void setConstantNull(LogicalType t);
  // Marks row i NULL (creating the validity array on first use).
  void setNull(size_t i);
  bool isValid(size_t i) const { return validity.empty() || validity[constant ? 0 : i] != 0; }
  bool allValid() const { return validity.empty(); }
  bool isConstantNull() const { return constant && !validity.empty() && validity[0] == 0; }
  // Rows stored: 1 for a constant vector.
  size_t physicalSize() const;
  // Row i as a Value (strings copied). For tests, EXPLAIN and output.
  Value value(size_t i) const;

  template <typename T> std::vector<T>& data();
  template <typename T> const std::vector<T>& data() const { return const_cast<Vector*>(this)->data<T>(); }
};

template <> inline std::vector<int64_t>& Vector::data<int64_t>() { return i64; }
template <> inline std::vector<double>& Vector::data<double>() { return f64; }
template <> inline std::vector<uint8_t>& Vector::data<uint8_t>() { return b8; }
template <> inline std::vector<std::string_view>& Vector::data<std::string_view>() { return str; }
template <> inline std::vector<const model::DurationHistogram*>& Vector::data<const model::DurationHistogram*>() { return hist; }

// Calls fn(T{}) with the C++ element type of logical type t (kNull: uint8_t).
template <typename Fn>
decltype(auto) dispatchPhysical(LogicalType t, Fn&& fn) {
  switch (t) {
    case LogicalType::kBigInt:
    case LogicalType::kId: return fn(int64_t{});
    case LogicalType::kDouble: return fn(double{});
    case LogicalType::kVarchar: return fn(std::string_view{});
    case LogicalType::kHistogram: return fn(static_cast<const model::DurationHistogram*>(nullptr));
    case LogicalType::kBoolean:
    case LogicalType::kNull: break;
  }
  return fn(uint8_t{});
}

// out = src at rows sel[0..n) (sel null: rows 0..n). A constant src stays constant.
// Strings and histograms stay views into src's owner.
void gather(const Vector& src, const uint32_t* sel, size_t n, Vector& out);
// out = rows [offset, offset + n) of the flat vector src (constant src stays constant).
void slice(const Vector& src, size_t offset, size_t n, Vector& out);
// Removes the first n rows of the flat vector v in place, keeping its buffers' capacity.
// Strings and histograms stay views into their owner.
void eraseFront(Vector& v, size_t n);
// Appends src's rows sel[0..n) (sel null: 0..n) to the flat vector dst of the same type,
// copying strings and histograms into arena. Constant src is expanded.
void append(const Vector& src, const uint32_t* sel, size_t n, Vector& dst, Arena& arena);
// Heap bytes the vector's buffers hold (capacity), for memory caps.
size_t memoryBytes(const Vector& v);

struct DataChunk {
  std::vector<Vector> columns;
  size_t rows = 0;             // rows in the flat columns
  std::vector<uint32_t> sel;   // active rows, ascending, when has_sel
  bool has_sel = false;
  // In a split pipeline (PhysicalOperator::split): where the rows stand in the whole input's
  // order. Chunks of a lower order come first; a chunk holds rows of one order.
  uint64_t order = 0;

  size_t size() const { return has_sel ? sel.size() : rows; }
  const uint32_t* selData() const { return has_sel ? sel.data() : nullptr; }
  void reset(size_t ncols) {
    columns.resize(ncols);
    rows = 0;
    sel.clear();
    has_sel = false;
    order = 0;
  }
};

}  // namespace argus::query
