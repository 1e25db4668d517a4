// VarintCursor: varints read straight off the bytes, for decoders' hot loops: no Status per
// value, no bounds check per byte while a whole varint fits. A fault (truncated or
// overlong varint) is a false return; the decoder then says what it was reading (the
// integer codecs decode again through ByteReader, which names the offset).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/bytes.h"

namespace argus::storage {

struct VarintCursor {
  const uint8_t* p;
  const uint8_t* end;

  explicit VarintCursor(std::string_view bytes)
      : p(reinterpret_cast<const uint8_t*>(bytes.data())), end(reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size()) {}

  size_t remaining() const { return static_cast<size_t>(end - p); }
  bool atEnd() const { return p == end; }

  bool next(uint64_t* v) {
    if (end - p >= 10) [[likely]] {
      const uint8_t* q = p;
      uint64_t result = 0;
      for (int shift = 0; shift < 63; shift += 7) {
        const uint8_t byte = *q++;
        result |= static_cast<uint64_t>(byte & 0x7f) << shift;
        if (byte < 0x80) {
          p = q;
          *v = result;
          return true;
        }
      }
      const uint8_t byte = *q++;  // the tenth: bit 63 only
      if (byte > 1) return false;
      p = q;
      *v = result | static_cast<uint64_t>(byte) << 63;
      return true;
    }
    uint64_t result = 0;
    for (int shift = 0; shift <= 63; shift += 7) {
      if (p >= end) return false;
      uint8_t byte = *p++;
      if (shift == 63 && byte > 1) return false;
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        *v = result;
        return true;
      }
    }
    return false;
  }
  bool nextSigned(int64_t* v) {
    uint64_t u;
    if (!next(&u)) return false;
    *v = zigzagDecode(u);
    return true;
  }
};

}  // namespace argus::storage
