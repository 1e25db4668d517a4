// Packed deltas: a hist-window segment's streams A and B (each row's window width and first
// bucket against its group's previous histogram) bit-packed with a width per group, in
// place of zstd'ed varints (docs/format/codecs.md#packed-deltas). The deltas of one kernel
// signature stay within a few bits from step to step, and most signatures' widths do not
// move at all (0 bits): smaller than the varints under zstd, and read with a shift and a
// mask, where a small zstd frame cost a kernel-p99 scan a fifth of its time to set up.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "storage/varint_cursor.h"

namespace argus::storage {

// Bits per value are at most this: a value needing more is an exception (below).
inline constexpr unsigned kMaxPackedDeltaBits = 15;

// Collects a segment's deltas in row order and writes the packed stream. Groups are the
// chunk's row groups (0 for every row of an ungrouped chunk).
class PackedDeltasWriter {
 public:
  void clear() { rows_.clear(); }
  // A row's stream-A value (zigzag width delta).
  void width(uint32_t group, uint64_t zz) { rows_.push_back(Row{group, zz, 0, false}); }
  // The stream-B value (zigzag first-bucket delta) of the row width() just began; only rows
  // with a non-empty window have one.
  void first(uint64_t zz) {
    rows_.back().first = zz;
    rows_.back().has_first = true;
  }
  // Appends the packed stream for the rows given since clear().
  void finish(std::string* out);

 private:
  struct Row {
    uint32_t group;
    uint64_t width, first;
    bool has_first;
  };
  std::vector<Row> rows_;
  // Scratch kept across segments.
  std::vector<uint32_t> order_;     // groups by first appearance
  std::vector<uint32_t> slot_;      // group -> its index in order_, or kNoSlot (packed_deltas.cpp)
  std::vector<size_t> starts_, fill_;  // per slot: where its values begin in values_
  std::vector<uint64_t> values_;    // one field's values, grouped by slot
  std::vector<uint8_t> bits_;       // per slot in order_: A bits << 4 | B bits
};

// Reads a packed stream back, row by row, as decodeWindowRows asks for each delta. Every
// read is a bool (false: the stream ends early or is malformed); the caller names the row.
class PackedDeltasReader {
 public:
  // `groups`: the chunk's group count (1 when ungrouped). Corruption for a malformed head.
  Status open(std::string_view stream, uint32_t groups);

  [[gnu::always_inline]] bool width(uint32_t group, uint64_t* zz) {
    uint16_t w = widths_[group];
    if (w == kUnseen) [[unlikely]] {  // the group's first row: its widths are next in the head
      if (head_ == head_end_) return false;
      w = widths_[group] = *head_++;
    }
    current_ = w;
    return read(w >> 4, zz);
  }
  // The first-bucket delta of the row width() just read.
  [[gnu::always_inline]] bool first(uint64_t* zz) { return read(current_ & 0xf, zz); }

  // Bytes of buffer held (for callers that drop a reader after a huge stream).
  size_t heldBytes() const { return bits_.capacity() + widths_.capacity() * sizeof(uint16_t); }
  // Every group width, bit and exception read, no byte left over.
  bool atEnd() const { return head_ == head_end_ && (pos_ + 7) / 8 == bit_bytes_ && exceptions_.atEnd(); }

 private:
  static constexpr uint16_t kUnseen = 0x100;  // above any head byte
  [[gnu::always_inline]] bool read(unsigned bits, uint64_t* zz) {
    static_assert(std::endian::native == std::endian::little, "the word load reads bits least significant first");
    uint64_t word;
    __builtin_memcpy(&word, bits_.data() + (pos_ >> 3), 8);
    const uint64_t mask = (uint64_t{1} << bits) - 1;
    uint64_t v = (word >> (pos_ & 7)) & mask;
    pos_ += bits;
    if (pos_ > bit_bytes_ * 8) [[unlikely]] return false;
    if (v == mask && bits != 0) [[unlikely]] {  // all ones: the rest follows as an exception
      uint64_t excess = 0;
      if (!exceptions_.next(&excess) || excess > UINT64_MAX - v) return false;
      v += excess;
    }
    *zz = v;
    return true;
  }

  std::vector<uint16_t> widths_;  // per group: A bits << 4 | B bits, or kUnseen
  const uint8_t* head_ = nullptr;
  const uint8_t* head_end_ = nullptr;
  std::string bits_;  // the packed bits and 8 zero bytes, so a word load never runs off
  size_t bit_bytes_ = 0;
  size_t pos_ = 0;  // bits read
  uint16_t current_ = 0;
  VarintCursor exceptions_{std::string_view()};
};

}  // namespace argus::storage
