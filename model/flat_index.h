// FlatIndex: an open-addressing hash table from a 128-bit key to a uint32 value, for the
// step codec's per-session tables (64-bit id -> dense id, record key -> list position).
//
// Built for reuse on a hot path: one flat array of slots, linear probing, and clear() in
// O(1) through a generation stamp (a slot is live only when its stamp is the current
// one), so a table that is cleared and refilled every record allocates only when it
// grows past its largest size so far. No erase. Not thread-safe; a value type.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace argus::model {

class FlatIndex {
 public:
  struct Key {
    uint64_t a = 0, b = 0;
    bool operator==(const Key&) const = default;
  };
  static constexpr uint32_t kAbsent = 0xffffffffu;

  size_t size() const { return size_; }

  void clear() {
    size_ = 0;
    if (++stamp_ == 0) {  // wrapped after 2^32 clears: forget every slot for real
      for (Slot& s : slots_) s.stamp = 0;
      stamp_ = 1;
    }
  }

  // Returns the value of `key`, or kAbsent.
  uint32_t find(Key key) const {
    if (size_ == 0) return kAbsent;
    for (size_t i = slotOf(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.stamp != stamp_) return kAbsent;
      if (s.key == key) return s.value;
    }
  }

  // Returns the value of `key`; inserts `value` first when the key is absent (then
  // *inserted is true).
  uint32_t findOrInsert(Key key, uint32_t value, bool* inserted) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    for (size_t i = slotOf(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.stamp != stamp_) {
        s = Slot{key, value, stamp_};
        ++size_;
        *inserted = true;
        return value;
      }
      if (s.key == key) {
        *inserted = false;
        return s.value;
      }
    }
  }

 private:
  struct Slot {
    Key key;
    uint32_t value = 0;
    uint32_t stamp = 0;  // live iff == stamp_
  };

  // Keys are often small integers (dense ids): mix, then take the top bits.
  size_t slotOf(Key k) const {
    uint64_t h = k.a * 0x9e3779b97f4a7c15ull + k.b * 0xc2b2ae3d27d4eb4full;
    h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ull;
    return static_cast<size_t>(h >> shift_);
  }

  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    shift_ = 64 - std::countr_zero(slots_.size());
    uint32_t live = stamp_;
    stamp_ = 1;
    size_ = 0;
    for (const Slot& s : old) {
      if (s.stamp != live) continue;
      size_t i = slotOf(s.key);
      while (slots_[i].stamp == stamp_) i = (i + 1) & mask_;
      slots_[i] = Slot{s.key, s.value, stamp_};
      ++size_;
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  int shift_ = 63;  // 64 - log2(slots_.size()); unused while empty
  size_t size_ = 0;
  uint32_t stamp_ = 1;
};

}  // namespace argus::model
