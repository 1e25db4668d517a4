// Byte-level encoding shared by every format: LEB128 varints, zigzag, fixed-width
// big-endian (keys) and little-endian (chunk headers) integers, and a bounds-checked
// reader that turns any overrun into a Corruption status instead of reading past the end.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "base/status.h"

namespace argus {

inline uint64_t zigzagEncode(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
inline int64_t zigzagDecode(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }
// Writes v's low `bytes` bytes big-endian at p (keys sort by them); returns the end. Key
// encoders on scan paths write into a sized buffer with it: appending a byte at a time cost
// ~400 instructions a chunk key.
inline char* putFixedBEAt(char* p, uint64_t v, int bytes) {
  if constexpr (std::endian::native == std::endian::little) {
    if (bytes > 0 && bytes <= 8) {  // the low bytes shifted to the top, swapped: one store
      const uint64_t be = __builtin_bswap64(v << (64 - 8 * bytes));
      std::memcpy(p, &be, static_cast<size_t>(bytes));
      return p + bytes;
    }
  }
  for (int i = bytes - 1; i >= 0; --i) *p++ = static_cast<char>(v >> (8 * i));
  return p;
}

// The `bytes` (1..8) big-endian bytes at p as an integer: a load and a swap where the host is
// little-endian (the byte loop was ~100 instructions a chunk key).
inline uint64_t getFixedBEAt(const char* p, int bytes) {
  if constexpr (std::endian::native == std::endian::little) {
    if (bytes > 0 && bytes <= 8) {
      uint64_t be = 0;
      std::memcpy(&be, p, static_cast<size_t>(bytes));
      return __builtin_bswap64(be) >> (64 - 8 * bytes);
    }
  }
  uint64_t r = 0;
  for (int i = 0; i < bytes; ++i) r = (r << 8) | static_cast<uint8_t>(p[i]);
  return r;
}

// Appends to a std::string; callers reserve() when they know the size.
class ByteWriter {
 public:
  explicit ByteWriter(std::string* out) : out_(out) {}

  void putU8(uint8_t v) { out_->push_back(static_cast<char>(v)); }
  void putVarint(uint64_t v) {
    char buf[10];
    size_t n = 0;
    while (v >= 0x80) {
      buf[n++] = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    buf[n++] = static_cast<char>(v);
    out_->append(buf, n);
  }
  void putSignedVarint(int64_t v) { putVarint(zigzagEncode(v)); }
  void putFixedLE(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out_->push_back(static_cast<char>(v >> (8 * i)));
  }
  void putFixedBE(uint64_t v, int bytes) {
    const size_t at = out_->size();
    out_->resize(at + static_cast<size_t>(bytes));
    putFixedBEAt(out_->data() + at, v, bytes);
  }
  void putDouble(double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    putFixedLE(bits, 8);
  }
  void putBytes(std::string_view s) { out_->append(s.data(), s.size()); }
  // Length-prefixed (varint) string.
  void putString(std::string_view s) {
    putVarint(s.size());
    putBytes(s);
  }
  size_t size() const { return out_->size(); }
  std::string* buffer() { return out_; }

 private:
  std::string* out_;
};

// Reads from a view; every getter fails with Corruption rather than overrunning.
// `what` names the object being decoded so errors say where they happened.
class ByteReader {
 public:
  ByteReader(std::string_view in, const char* what = "buffer") : p_(in.data()), end_(in.data() + in.size()), begin_(in.data()), what_(what) {}

  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  size_t offset() const { return static_cast<size_t>(p_ - begin_); }
  // The bytes not read yet.
  std::string_view rest() const { return std::string_view(p_, remaining()); }
  bool atEnd() const { return p_ == end_; }

  Status getU8(uint8_t* v) {
    if (p_ >= end_) return truncated();
    *v = static_cast<uint8_t>(*p_++);
    return Status::ok();
  }
  Status getVarint(uint64_t* v) {
    uint64_t result = 0;
    for (int shift = 0; shift <= 63; shift += 7) {
      if (p_ >= end_) return truncated();
      uint8_t byte = static_cast<uint8_t>(*p_++);
      if (shift == 63 && byte > 1) return Status::corruption(std::string(what_) + ": varint overflows 64 bits at offset " + std::to_string(offset()));
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        *v = result;
        return Status::ok();
      }
    }
    return Status::corruption(std::string(what_) + ": varint longer than 10 bytes at offset " + std::to_string(offset()));
  }
  Status getSignedVarint(int64_t* v) {
    uint64_t u;
    ARGUS_RETURN_IF_ERROR(getVarint(&u));
    *v = zigzagDecode(u);
    return Status::ok();
  }
  // Reads a varint that must fit `limit` (inclusive); guards counts before allocation.
  Status getBoundedVarint(uint64_t* v, uint64_t limit, const char* field) {
    ARGUS_RETURN_IF_ERROR(getVarint(v));
    if (*v > limit) return Status::corruption(std::string(what_) + ": " + field + " " + std::to_string(*v) + " exceeds limit " + std::to_string(limit));
    return Status::ok();
  }
  Status getFixedLE(uint64_t* v, int bytes) {
    if (remaining() < static_cast<size_t>(bytes)) return truncated();
    uint64_t r = 0;
    if (std::endian::native == std::endian::little && bytes == 8) {
      std::memcpy(&r, p_, 8);  // one load: a chunk's checksum, read per chunk a scan reads
    } else {
      for (int i = 0; i < bytes; ++i) r |= static_cast<uint64_t>(static_cast<uint8_t>(p_[i])) << (8 * i);
    }
    p_ += bytes;
    *v = r;
    return Status::ok();
  }
  Status getFixedBE(uint64_t* v, int bytes) {
    if (remaining() < static_cast<size_t>(bytes)) return truncated();
    *v = getFixedBEAt(p_, bytes);
    p_ += bytes;
    return Status::ok();
  }
  Status getDouble(double* d) {
    uint64_t bits = 0;
    ARGUS_RETURN_IF_ERROR(getFixedLE(&bits, 8));
    std::memcpy(d, &bits, sizeof bits);
    return Status::ok();
  }
  Status getBytes(size_t n, std::string_view* out) {
    if (remaining() < n) return truncated();
    *out = std::string_view(p_, n);
    p_ += n;
    return Status::ok();
  }
  Status getString(std::string_view* out, size_t max_len = 1 << 20) {
    uint64_t n;
    ARGUS_RETURN_IF_ERROR(getBoundedVarint(&n, max_len, "string length"));
    return getBytes(static_cast<size_t>(n), out);
  }

 private:
  Status truncated() const {
    return Status::corruption(std::string(what_) + ": truncated at offset " + std::to_string(offset()));
  }
  const char* p_;
  const char* end_;
  const char* begin_;
  const char* what_;
};

}  // namespace argus
