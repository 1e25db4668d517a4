#include "storage/bitpack_codec.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "base/bytes.h"
#include "storage/column_codec.h"

namespace argus::storage {
namespace {

static_assert(std::endian::native == std::endian::little, "values are packed from bit 0 of byte 0 up");

size_t packedBytes(int width, size_t rows) { return (static_cast<size_t>(width) * rows + 7) / 8; }

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
  out->resize(rows);
  int64_t* o = out->data();
  std::fill(o, o + begin, 0);
  std::fill(o + end, o + rows, 0);
  // Whole 8-byte loads while they stay inside the payload, then the last few through a copy.
  size_t i = begin;
  for (; i < end; ++i) {
    const size_t bit = i * width;
    if (bit / 8 + 8 > bytes) break;
    uint64_t word;
    std::memcpy(&word, d + bit / 8, 8);
    o[i] = static_cast<int64_t>(static_cast<uint64_t>(lo) + ((word >> (bit % 8)) & mask));
  }
  for (; i < end; ++i) {
    const size_t bit = i * width;
    uint64_t word = 0;
    std::memcpy(&word, d + bit / 8, bytes - bit / 8);
    o[i] = static_cast<int64_t>(static_cast<uint64_t>(lo) + ((word >> (bit % 8)) & mask));
  }
  return Status::ok();
}

}  // namespace argus::storage
