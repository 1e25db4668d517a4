// VarintCursor: varints read straight off the bytes, for decoders' hot loops: no Status per
// value, no bounds check per byte while a whole varint fits. A fault (truncated or
// overlong varint) is a false return; the decoder then says what it was reading (the
// integer codecs decode again through ByteReader, which names the offset).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
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

  [[gnu::always_inline]] bool next(uint64_t* v) {
    // One byte (counts, small deltas: most of these streams' varints) without the loop.
    if (p != end && *p < 0x80) [[likely]] {
      *v = *p++;
      return true;
    }
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
  [[gnu::always_inline]] bool nextSigned(int64_t* v) {
    uint64_t u;
    if (!next(&u)) return false;
    *v = zigzagDecode(u);
    return true;
  }

  // next() for streams of long varints (hashes, ids: 6 bytes or more each): two loads
  // and a mask-and-merge in place of a branch per byte, ~2.6x faster at 10 bytes. On short
  // varints it is slower than next() (each length waits on the load before it), so
  // decoders choose per chunk from its bytes per value.
  [[gnu::always_inline]] bool nextLong(uint64_t* v) {
    if (end - p < 16) return next(v);
    uint64_t w;
    std::memcpy(&w, p, 8);
    if (const uint64_t stops = ~w & 0x8080808080808080ull; stops != 0) {
      const int bits = __builtin_ctzll(stops) + 1;  // 8 x the varint's length
      *v = pack7(bits == 64 ? w : w & ((uint64_t{1} << bits) - 1));
      p += bits / 8;
      return true;
    }
    const uint8_t b8 = p[8];
    if (b8 < 0x80) {
      *v = pack7(w) | static_cast<uint64_t>(b8) << 56;
      p += 9;
      return true;
    }
    const uint8_t b9 = p[9];  // the tenth: bit 63 only
    if (b9 > 1) return false;
    *v = pack7(w) | static_cast<uint64_t>(b8 & 0x7f) << 56 | static_cast<uint64_t>(b9) << 63;
    p += 10;
    return true;
  }
  [[gnu::always_inline]] bool nextSignedLong(int64_t* v) {
    uint64_t u;
    if (!nextLong(&u)) return false;
    *v = zigzagDecode(u);
    return true;
  }

 private:
  static_assert(std::endian::native == std::endian::little, "byte 0 of a load is its low byte");
  // The low 7 bits of each of w's 8 bytes, packed into 56 bits.
  static uint64_t pack7(uint64_t w) {
    w &= 0x7f7f7f7f7f7f7f7full;
    w = ((w & 0x7f007f007f007f00ull) >> 1) | (w & 0x007f007f007f007full);
    w = ((w & 0x3fff00003fff0000ull) >> 2) | (w & 0x00003fff00003fffull);
    return ((w & 0x0fffffff00000000ull) >> 4) | (w & 0x000000000fffffffull);
  }
};

}  // namespace argus::storage
