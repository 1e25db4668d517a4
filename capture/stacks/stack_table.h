// StackTable: stack ids and the set of stacks already described (docs/capture/stacks.md,
// "Frames and stacks"). A stack id is XXH3-64 over its frame ids, leaf first (the native
// leaf, then Python frames from the innermost out); the same stack gets the same id in every
// process and run. remember() says whether an id is new, so that its dictionary entry
// (model::StackDictEntry, sent once per session by the StepSender) is built only once.
//
// Memory is fixed at construction: an open-addressing set of ids; past max_stacks the
// table is full and new stacks are reported as kFull (the sampler folds them into one
// overflow stack). Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace argus::capture::stacks {

class StackTable {
 public:
  explicit StackTable(size_t max_stacks);

  // The stack id of frame_ids[0, count) (leaf first). Never 0.
  static uint64_t fold(const uint64_t* frame_ids, size_t count);

  enum class Seen : uint8_t { kKnown, kNew, kFull };
  // Adds `stack_id` (REQUIRES: nonzero) unless known or the table is full.
  Seen remember(uint64_t stack_id);

  size_t size() const { return size_; }
  size_t maxStacks() const { return max_stacks_; }

 private:
  const size_t max_stacks_;
  std::vector<uint64_t> slots_;  // 0 = empty; size a power of two >= 2 * max_stacks
  size_t size_ = 0;
};

}  // namespace argus::capture::stacks
