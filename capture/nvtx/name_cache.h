// NameCache: a training thread's memory of the names it has already sent to the drain, so
// that a repeated name costs a hash and a compare instead of copying its text into the ring.
//
// Keyed by content (a hash of the bytes plus the domain), never by the message pointer: a
// pointer says nothing about the text behind it (Python bindings pass the same temporary
// buffer for every name; a C string may be rewritten in place). Direct-mapped: kSlots
// entries, the texts in a fixed arena; a full arena empties the whole cache. A slot that
// changes meaning is re-announced to the drain with a kDefine record before its next use,
// and records are read in order, so the drain's slot -> name map is always current.
//
// Owned and used by one thread; no allocation after construction.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>

namespace argus::capture::nvtx {

class NameCache {
 public:
  static constexpr uint32_t kSlots = 256;
  static constexpr uint32_t kArenaBytes = 16 * 1024;

  NameCache() : arena_(new char[kArenaBytes]) { clear(); }

  static uint64_t hash(const char* text, uint32_t bytes, uint16_t domain);

  // Returns the slot reference (1 + slot) holding (domain, text), or 0 when absent.
  uint32_t find(uint64_t h, const char* text, uint32_t bytes, uint16_t domain) const {
    const Entry& e = entries_[h & (kSlots - 1)];
    if (e.hash == h && e.bytes == bytes && e.domain == domain && e.valid && std::memcmp(arena_.get() + e.offset, text, bytes) == 0) {
      return static_cast<uint32_t>(h & (kSlots - 1)) + 1;
    }
    return 0;
  }
  // Stores (domain, text) in its slot, replacing what was there; returns the slot reference.
  // REQUIRES: bytes <= kArenaBytes.
  uint32_t insert(uint64_t h, const char* text, uint32_t bytes, uint16_t domain);
  void clear();

 private:
  struct Entry {
    uint64_t hash;
    uint32_t offset;  // into arena_
    uint32_t bytes;
    uint16_t domain;
    bool valid;
  };
  Entry entries_[kSlots];
  std::unique_ptr<char[]> arena_;
  uint32_t arena_used_ = 0;
};

}  // namespace argus::capture::nvtx
