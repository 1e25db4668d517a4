// ByteArena: bytes copied in back to back, in blocks that never move, so a view of a copy
// stays valid until clear() or the arena's end. A copy costs no allocation of its own and a
// full block is not copied again as the arena grows (a growing std::string moved every byte
// on each doubling). Not thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace argus {

class ByteArena {
 public:
  explicit ByteArena(size_t block_bytes = 64 * 1024) : block_bytes_(block_bytes) {}

  std::string_view copy(std::string_view s) {
    if (s.empty()) return {};
    if (blocks_.empty() || block_size_ - block_used_ < s.size()) {
      block_size_ = std::max(block_bytes_, s.size());
      blocks_.push_back(std::make_unique_for_overwrite<char[]>(block_size_));
      block_used_ = 0;
      bytes_ += block_size_;
    }
    char* p = blocks_.back().get() + block_used_;
    std::memcpy(p, s.data(), s.size());
    block_used_ += s.size();
    return {p, s.size()};
  }
  // Bytes of the blocks held.
  size_t bytes() const { return bytes_; }
  void clear() {
    blocks_.clear();
    block_used_ = block_size_ = bytes_ = 0;
  }

 private:
  size_t block_bytes_;
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = 0;
  size_t block_size_ = 0;
  size_t bytes_ = 0;
};

}  // namespace argus
