// Sort keys as order-preserving 64-bit codes, shared by ORDER BY (sort.h) and windows
// (window_layout.h): comparing (prefix, code) pairs orders rows as the key's direction and
// NULL placement say, without looking at the values' types again.
#pragma once

#include <cstdint>
#include <vector>

#include "query/common/vector.h"

namespace argus::query {

struct SortKeyColumn {
  std::vector<uint8_t> prefix;  // NULL placement: 0 before values, 1 values, 2 after values
  std::vector<uint64_t> code;   // equal values have equal codes (VARCHAR: their rank)

  // Compares rows a and b: negative, 0 or positive.
  int compare(uint32_t a, uint32_t b) const {
    if (prefix[a] != prefix[b]) return prefix[a] < prefix[b] ? -1 : 1;
    if (code[a] != code[b]) return code[a] < code[b] ? -1 : 1;
    return 0;
  }
};

// Codes for the first `rows` rows of the flat vector v.
SortKeyColumn encodeSortKey(const Vector& v, size_t rows, bool desc, bool nulls_first);

// Whether rows a and b of the flat vector v would get equal codes (NULLs alike, NaNs alike,
// -0 = 0), without encoding: what finding key changes in rows already in order needs.
bool sameSortKey(const Vector& v, size_t a, size_t b);

}  // namespace argus::query
