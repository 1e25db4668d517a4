#include "query/execution/sort_key.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace argus::query {

namespace {

using L = LogicalType;

// Order-preserving unsigned codes.
inline uint64_t bigintCode(int64_t v) { return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63); }
inline uint64_t doubleCode(double d) {
  if (std::isnan(d)) return UINT64_MAX;  // NaN sorts after every number
  if (d == 0) d = 0;
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  return (bits >> 63) ? ~bits : bits | (uint64_t{1} << 63);
}

}  // namespace

SortKeyColumn encodeSortKey(const Vector& v, size_t rows, bool desc, bool nulls_first) {
  SortKeyColumn k;
  k.prefix.assign(rows, 1);
  k.code.assign(rows, 0);
  switch (v.type) {
    case L::kBigInt:
      for (size_t i = 0; i < rows; ++i) k.code[i] = bigintCode(v.i64[i]);
      break;
    case L::kId:
      for (size_t i = 0; i < rows; ++i) k.code[i] = static_cast<uint64_t>(v.i64[i]);
      break;
    case L::kDouble:
      for (size_t i = 0; i < rows; ++i) k.code[i] = doubleCode(v.f64[i]);
      break;
    case L::kBoolean:
      for (size_t i = 0; i < rows; ++i) k.code[i] = v.b8[i];
      break;
    case L::kVarchar: {
      std::vector<uint32_t> idx(rows);
      std::iota(idx.begin(), idx.end(), 0u);
      std::sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) { return v.str[a] < v.str[b]; });
      uint64_t rank = 0;
      for (size_t j = 0; j < rows; ++j) {
        if (j > 0 && v.str[idx[j]] != v.str[idx[j - 1]]) ++rank;
        k.code[idx[j]] = rank;
      }
      break;
    }
    case L::kNull:
    case L::kHistogram: break;
  }
  if (desc) {
    for (uint64_t& c : k.code) c = ~c;
  }
  for (size_t i = 0; i < rows; ++i) {
    if (!v.isValid(i)) {
      k.prefix[i] = nulls_first ? 0 : 2;
      k.code[i] = 0;
    }
  }
  return k;
}

bool sameSortKey(const Vector& v, size_t a, size_t b) {
  const bool valid = v.isValid(a);
  if (valid != v.isValid(b)) return false;
  if (!valid) return true;
  switch (v.type) {
    case L::kBigInt:
    case L::kId: return v.i64[a] == v.i64[b];
    case L::kDouble: return doubleCode(v.f64[a]) == doubleCode(v.f64[b]);
    case L::kBoolean: return v.b8[a] == v.b8[b];
    case L::kVarchar: return v.str[a] == v.str[b];
    case L::kNull:
    case L::kHistogram: break;
  }
  return true;
}

}  // namespace argus::query
