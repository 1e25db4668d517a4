#include "storage/bitpack_codec.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <utility>

#include "base/bytes.h"
#include "storage/column_codec.h"

namespace argus::storage {
namespace {

static_assert(std::endian::native == std::endian::little, "values are packed from bit 0 of byte 0 up");

size_t packedBytes(int width, size_t rows) { return (static_cast<size_t>(width) * rows + 7) / 8; }

// Value i of the payload d (bytes long), in a load that stays inside it.
inline int64_t unpackOne(const uint8_t* d, size_t bytes, size_t i, int width, uint64_t lo, uint64_t mask) {
  const size_t bit = i * static_cast<size_t>(width);
  uint64_t word = 0;
  if (bytes - bit / 8 >= 8) [[likely]] {
    std::memcpy(&word, d + bit / 8, 8);  // one load; the variable length is a call
  } else {
    std::memcpy(&word, d + bit / 8, bytes - bit / 8);
  }
  return static_cast<int64_t>(lo + ((word >> (bit % 8)) & mask));
}

// Blocks [first, last) of eight values: block b's W bytes start at byte b * W. With W a
// constant, each value is a load at a fixed offset, a fixed shift, a mask and an add.
// REQUIRES: every load stays inside the payload (last * W + 7 * W / 8 + 8 <= its bytes); W > 0.
template <int W>
void unpackBlocks(const uint8_t* d, uint64_t lo, int64_t* o, size_t first, size_t last) {
  constexpr uint64_t kMask = (uint64_t{1} << W) - 1;
  for (size_t b = first; b < last; ++b) {
    const uint8_t* p = d + b * W;
    int64_t* out = o + b * 8;
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      uint64_t word;
      std::memcpy(&word, p + j * W / 8, 8);
      out[j] = static_cast<int64_t>(lo + ((word >> (j * W % 8)) & kMask));
    }
  }
}

using UnpackBlocks = void (*)(const uint8_t*, uint64_t, int64_t*, size_t, size_t);
template <size_t... W>
constexpr std::array<UnpackBlocks, sizeof...(W)> unpackTable(std::index_sequence<W...>) {
  return {(W == 0 ? nullptr : &unpackBlocks<W == 0 ? 1 : static_cast<int>(W)>)...};
}
constexpr auto kUnpackBlocks = unpackTable(std::make_index_sequence<kMaxBitPackWidth + 1>());

}  // namespace

size_t bitPackSize(int64_t lo, int width, size_t rows) { return zigzagLen(lo) + 1 + packedBytes(width, rows); }

bool encodeBitPack(std::span<const int64_t> values, std::string* out) {
  if (values.empty()) return false;
  const auto [lo_it, hi_it] = std::minmax_element(values.begin(), values.end());
  const int64_t lo = *lo_it;
  const int width = bitPackWidth(lo, *hi_it);
  if (width > kMaxBitPackWidth) return false;
  VarintWriter w(out);
  char* p = putZigzag(w.reserve(11), lo);
  *p++ = static_cast<char>(width);
  w.commit(p);
  const size_t bytes = packedBytes(width, values.size());
  // 8 spare bytes: the last value's store may reach past the payload; finish() trims them.
  p = w.reserve(bytes + 8);
  std::memset(p, 0, bytes + 8);
  for (size_t i = 0; i < values.size(); ++i) {
    const size_t bit = i * static_cast<size_t>(width);
    uint64_t word;
    std::memcpy(&word, p + bit / 8, 8);
    word |= (static_cast<uint64_t>(values[i]) - static_cast<uint64_t>(lo)) << (bit % 8);
    std::memcpy(p + bit / 8, &word, 8);
  }
  w.commit(p + bytes);
  w.finish();
  return true;
}

Status decodeBitPack(std::string_view raw, size_t rows, std::vector<int64_t>* out, size_t begin, size_t end) {
  ByteReader r(raw, "bit-pack payload");
  int64_t lo = 0;
  uint8_t width = 0;
  ARGUS_RETURN_IF_ERROR(r.getSignedVarint(&lo));
  ARGUS_RETURN_IF_ERROR(r.getU8(&width));
  if (width > kMaxBitPackWidth) return Status::corruption("bit-pack: width " + std::to_string(width) + " above " + std::to_string(kMaxBitPackWidth));
  const size_t bytes = packedBytes(width, rows);
  if (r.remaining() != bytes) {
    return Status::corruption("bit-pack: " + std::to_string(r.remaining()) + " bytes of values where " + std::to_string(rows) + " rows of " +
                              std::to_string(width) + " bits take " + std::to_string(bytes));
  }
  const auto* d = reinterpret_cast<const uint8_t*>(raw.data() + (raw.size() - bytes));
  const uint64_t mask = (uint64_t{1} << width) - 1;  // width <= 56
  end = std::min(end, rows);
  begin = std::min(begin, end);
  out->resize(rows);  // the rows outside [begin, end) hold anything: no reader looks at them
  int64_t* o = out->data();
  if (begin == end) return Status::ok();
  if (width == 0) {
    std::fill(o + begin, o + end, lo);
    return Status::ok();
  }
  // The blocks of eight values that cover [begin, end), as far as their loads stay inside
  // the payload, through the unrolled decoder of their width (a few rows around [begin, end)
  // too: cheaper than one at a time, ~15 instructions a row); the rows past them one at a time.
  const size_t reach = static_cast<size_t>(7 * width / 8 + 8);  // a block's bytes read past its start
  const size_t safe_blocks = bytes >= reach ? (bytes - reach) / width + 1 : 0;  // none writes past `rows`
  const size_t first_block = std::min(begin / 8, safe_blocks);
  const size_t last_block = std::max(first_block, std::min((end + 7) / 8, safe_blocks));
  kUnpackBlocks[width](d, static_cast<uint64_t>(lo), o, first_block, last_block);
  for (size_t i = std::max(begin, last_block * 8); i < end; ++i) o[i] = unpackOne(d, bytes, i, width, static_cast<uint64_t>(lo), mask);
  return Status::ok();
}

}  // namespace argus::storage
