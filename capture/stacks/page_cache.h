// PageCache: whole-page reads through a MemoryReader, kept for one sampling round, so that
// a walk over nearby structures costs one system call per page instead of one per field
// (docs/capture/stacks.md, "Cost"). CPython 3.11+ keeps a thread's frames contiguous on its
// data stack: a 20-frame stack is one or two pages. A page is mapped or not as a whole, so a
// page that fails to read means any read inside it would fail too.
//
// Values are a snapshot taken at the page's first read in the round; reset() forgets them
// (call it at the start of every round). Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "capture/stacks/memory_reader.h"

namespace argus::capture::stacks {

class PageCache {
 public:
  static constexpr size_t kPageBytes = 4096;
  static constexpr size_t kPages = 16;

  explicit PageCache(MemoryReader& reader) : reader_(reader) {}

  // Copies n bytes at addr into out through cached pages. False (counted by the reader)
  // when a page they touch does not read, or the range is implausible.
  bool read(uint64_t addr, void* out, size_t n);
  template <typename T>
  bool readValue(uint64_t addr, T* out) {
    return read(addr, out, sizeof(T));
  }

  void reset() { used_ = 0; }
  uint64_t pageReads() const { return page_reads_; }

 private:
  // The cached copy of the page at `base` (page-aligned), reading it on a miss; nullptr
  // when it does not read.
  const uint8_t* page(uint64_t base);

  MemoryReader& reader_;
  uint64_t bases_[kPages] = {};
  alignas(64) uint8_t pages_[kPages][kPageBytes];
  size_t used_ = 0;   // pages cached this round
  size_t next_ = 0;   // the slot a miss replaces once all are used (round robin)
  size_t last_ = 0;   // the slot of the last page read from
  uint64_t page_reads_ = 0;
};

}  // namespace argus::capture::stacks
