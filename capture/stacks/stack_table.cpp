#include "capture/stacks/stack_table.h"

#include <xxhash.h>

#include <algorithm>
#include <bit>

namespace argus::capture::stacks {

StackTable::StackTable(size_t max_stacks)
    : max_stacks_(max_stacks), slots_(std::bit_ceil(std::max<size_t>(2 * max_stacks, 16))) {}

uint64_t StackTable::fold(const uint64_t* frame_ids, size_t count) {
  uint64_t id = XXH3_64bits(frame_ids, count * sizeof(uint64_t));
  return id == 0 ? 1 : id;
}

StackTable::Seen StackTable::remember(uint64_t stack_id) {
  const size_t mask = slots_.size() - 1;
  // The id is already a hash: its low bits index directly. At most half full: probes are short.
  for (size_t i = stack_id & mask;; i = (i + 1) & mask) {
    if (slots_[i] == stack_id) return Seen::kKnown;
    if (slots_[i] == 0) {
      if (size_ >= max_stacks_) return Seen::kFull;
      slots_[i] = stack_id;
      ++size_;
      return Seen::kNew;
    }
  }
}

}  // namespace argus::capture::stacks
