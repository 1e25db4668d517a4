// Packed deltas: docs/format/codecs.md#packed-deltas.
#include "storage/packed_deltas.h"

#include <algorithm>
#include <bit>
#include <span>

#include "base/bytes.h"
#include "storage/column_codec.h"

namespace argus::storage {
namespace {

constexpr uint32_t kNoSlot = UINT32_MAX;

// Bits per value that make `values` about the fewest bytes: a value below the all-ones
// mask in that many bits; any other as the mask, its excess as an exception varint (counted
// at its largest for the value's bit width). 0 bits only when every value is 0.
unsigned chooseBits(std::span<const uint64_t> values) {
  // v >= mask(b) = 2^b - 1 exactly when bit_width(v + 1) > b: one pass, then a sum per width.
  size_t at_width[66] = {};
  for (uint64_t v : values) ++at_width[v == UINT64_MAX ? 65 : std::bit_width(v + 1)];
  if (at_width[1] == values.size()) return 0;
  unsigned top = 65;  // the widest width any value has
  while (at_width[top] == 0) --top;
  unsigned best = 1;
  size_t best_bits = SIZE_MAX;
  // At top bits no value is an exception: wider only costs more.
  for (unsigned b = 1; b <= std::min(kMaxPackedDeltaBits, top); ++b) {
    const uint64_t mask = (uint64_t{1} << b) - 1;
    size_t bits = values.size() * b;
    for (unsigned w = b + 1; w <= top; ++w) {
      const uint64_t widest = w >= 64 ? UINT64_MAX : (uint64_t{1} << w) - 1;
      bits += at_width[w] * 8 * varintLen(widest - mask);
    }
    if (bits < best_bits) {
      best_bits = bits;
      best = b;
    }
  }
  return best;
}

// LSB-first bits into a string.
class BitWriter {
 public:
  explicit BitWriter(std::string* out) : out_(out) {}
  void put(uint64_t v, unsigned bits) {
    acc_ |= v << used_;
    used_ += bits;
    while (used_ >= 8) {
      out_->push_back(static_cast<char>(acc_));
      acc_ >>= 8;
      used_ -= 8;
    }
  }
  void flush() {
    if (used_ > 0) out_->push_back(static_cast<char>(acc_));
    acc_ = 0;
    used_ = 0;
  }

 private:
  std::string* out_;
  uint64_t acc_ = 0;  // bits not yet written, used_ < 8 of them between calls
  unsigned used_ = 0;
};

}  // namespace

void PackedDeltasWriter::finish(std::string* out) {
  // Groups by first appearance: the head lists their widths in that order, and a reader
  // takes the next head byte at a group's first row.
  order_.clear();
  std::fill(slot_.begin(), slot_.end(), kNoSlot);
  for (const Row& r : rows_) {
    if (r.group >= slot_.size()) slot_.resize(r.group + 1, kNoSlot);
    if (slot_[r.group] == kNoSlot) {
      slot_[r.group] = static_cast<uint32_t>(order_.size());
      order_.push_back(r.group);
    }
  }
  bits_.assign(order_.size(), 0);
  // Each group's values side by side (a counting sort by group), its width chosen on them.
  for (const bool first : {false, true}) {
    starts_.assign(order_.size() + 1, 0);
    for (const Row& r : rows_) {
      if (!first || r.has_first) ++starts_[slot_[r.group] + 1];
    }
    for (size_t k = 0; k < order_.size(); ++k) starts_[k + 1] += starts_[k];
    values_.resize(starts_.back());
    fill_ = starts_;
    for (const Row& r : rows_) {
      if (!first || r.has_first) values_[fill_[slot_[r.group]]++] = first ? r.first : r.width;
    }
    for (size_t k = 0; k < order_.size(); ++k) {
      const unsigned b = chooseBits(std::span(values_).subspan(starts_[k], starts_[k + 1] - starts_[k]));
      bits_[k] |= static_cast<uint8_t>(first ? b : b << 4);
    }
  }
  ByteWriter w(out);
  w.putVarint(order_.size());
  for (uint8_t b : bits_) w.putU8(b);
  thread_local std::string packed, exceptions;
  packed.clear();
  exceptions.clear();
  BitWriter bw(&packed);
  ByteWriter ew(&exceptions);
  auto put = [&](uint64_t v, unsigned bits) {
    if (bits == 0) return;
    const uint64_t mask = (uint64_t{1} << bits) - 1;
    if (v >= mask) {
      ew.putVarint(v - mask);
      v = mask;
    }
    bw.put(v, bits);
  };
  for (const Row& r : rows_) {
    const uint8_t b = bits_[slot_[r.group]];
    put(r.width, b >> 4);
    if (r.has_first) put(r.first, b & 0xf);
  }
  bw.flush();
  w.putVarint(packed.size());
  w.putBytes(packed);
  w.putBytes(exceptions);
}

Status PackedDeltasReader::open(std::string_view stream, uint32_t groups) {
  ByteReader r(stream, "hist-window packed deltas");
  uint64_t listed = 0, bit_bytes = 0;
  ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&listed, std::max<uint32_t>(groups, 1), "group count"));
  std::string_view head, bits;
  ARGUS_RETURN_IF_ERROR(r.getBytes(listed, &head));
  ARGUS_RETURN_IF_ERROR(r.getBoundedVarint(&bit_bytes, r.remaining(), "packed bytes"));
  ARGUS_RETURN_IF_ERROR(r.getBytes(bit_bytes, &bits));
  head_ = reinterpret_cast<const uint8_t*>(head.data());
  head_end_ = head_ + head.size();
  bits_.assign(bits);
  bits_.append(8, '\0');
  bit_bytes_ = bits.size();
  pos_ = 0;
  exceptions_ = VarintCursor(r.rest());
  widths_.assign(std::max<uint32_t>(groups, 1), kUnseen);
  return Status::ok();
}

}  // namespace argus::storage
