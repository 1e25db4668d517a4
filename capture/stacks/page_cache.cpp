#include "capture/stacks/page_cache.h"

#include <cstring>

namespace argus::capture::stacks {

const uint8_t* PageCache::page(uint64_t base) {
  // Walks read field after field of one page: the last page answers most reads.
  if (last_ < used_ && bases_[last_] == base) return pages_[last_];
  for (size_t i = 0; i < used_; ++i) {
    if (bases_[i] == base) {
      last_ = i;
      return pages_[i];
    }
  }
  size_t slot = used_ < kPages ? used_++ : (next_++ % kPages);
  ++page_reads_;
  if (!reader_.read(base, pages_[slot], kPageBytes)) {
    // Forget the slot: its bytes are unspecified now.
    bases_[slot] = 0;
    return nullptr;
  }
  bases_[slot] = base;
  last_ = slot;
  return pages_[slot];
}

bool PageCache::read(uint64_t addr, void* out, size_t n) {
  if (addr < kPageBytes || addr + n < addr) return reader_.read(addr, out, n);  // counted as the error it is
  auto* dst = static_cast<uint8_t*>(out);
  while (n > 0) {
    const uint64_t base = addr & ~uint64_t{kPageBytes - 1};
    const size_t off = static_cast<size_t>(addr - base);
    const size_t take = n < kPageBytes - off ? n : kPageBytes - off;
    const uint8_t* p = page(base);
    if (p == nullptr) return false;
    std::memcpy(dst, p + off, take);
    dst += take, addr += take, n -= take;
  }
  return true;
}

}  // namespace argus::capture::stacks
