#include "capture/nvtx/name_cache.h"

// Inlined: names are short, and XXH3's short-input path is a few instructions once it is
// not behind a call into libxxhash.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace argus::capture::nvtx {

uint64_t NameCache::hash(const char* text, uint32_t bytes, uint16_t domain) {
  // The domain seeds the hash: "forward" in two domains is two names.
  return XXH3_64bits_withSeed(text, bytes, domain);
}

uint32_t NameCache::insert(uint64_t h, const char* text, uint32_t bytes, uint16_t domain) {
  if (kArenaBytes - arena_used_ < bytes) clear();  // the arena is full: start over
  uint32_t slot = static_cast<uint32_t>(h & (kSlots - 1));
  Entry& e = entries_[slot];
  std::memcpy(arena_.get() + arena_used_, text, bytes);
  e = Entry{h, arena_used_, bytes, domain, true};
  arena_used_ += bytes;
  return slot + 1;
}

void NameCache::clear() {
  for (Entry& e : entries_) e = Entry{0, 0, 0, 0, false};
  arena_used_ = 0;
}

}  // namespace argus::capture::nvtx
