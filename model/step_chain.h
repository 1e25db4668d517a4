// Delta chains cut at block boundaries (docs/wire/step-record.md, "Chains").
//
// A delta record can only be decoded after every record since its keyframe. argusd keeps
// unsealed records in the encoded form they arrived in and seals them a block of steps
// at a time, so a chain must never cross a block boundary: the first record of a session,
// and every record whose (attempt, step / block_steps) differs from the previous one's,
// is a keyframe. Then each block of one session decodes on its own.
//
// Our senders also cut their chains every kChainSteps steps within a block, which the rule
// allows (a keyframe may come anywhere): a read of a block's newest steps while it is still
// unsealed then decodes at most kChainSteps - 1 older records per rank, not the whole block
// (storage/head_entry.h). The cost: one keyframe (~1.3 KB instead of ~0.45 KB with 64
// kernel signatures) every 32 steps, about 26 B per step (6%) on the wire.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "model/step_codec.h"
#include "model/step_record.h"

namespace argus::model {

// True when the encoding's flags byte says keyframe (false for an empty input).
bool isKeyframe(std::string_view encoded);

// Where a chain stands: the (attempt, block) of the last record coded in it.
class ChainPosition {
 public:
  explicit ChainPosition(uint64_t block_steps = 0) : block_steps_(block_steps) {}
  // 0: chains are never cut (protocol version 1 senders, standalone encodings).
  void setBlockSteps(uint64_t block_steps) { block_steps_ = block_steps, have_ = false; }
  uint64_t blockSteps() const { return block_steps_; }
  // True when a record at (attempt, step) must start a new chain.
  bool startsChain(uint16_t attempt, uint64_t step) const {
    return !have_ || attempt != attempt_ || (block_steps_ != 0 && step / block_steps_ != block_);
  }
  void advance(uint16_t attempt, uint64_t step) {
    have_ = true;
    attempt_ = attempt;
    block_ = block_steps_ == 0 ? 0 : step / block_steps_;
  }
  void reset() { have_ = false; }

 private:
  uint64_t block_steps_;
  bool have_ = false;
  uint16_t attempt_ = 0;
  uint64_t block_ = 0;
};

inline constexpr uint64_t kChainSteps = 32;

// The steps a sender's chain spans at most with blocks of `block_steps` (0: unbounded).
// Both are powers of two, so chains still never cross a block boundary.
inline uint64_t senderChainSteps(uint64_t block_steps) { return block_steps == 0 ? 0 : std::min(block_steps, kChainSteps); }

// A StepEncoder that starts a keyframe wherever ChainPosition says a chain starts, at the
// sender's chain length (senderChainSteps).
class ChainedStepEncoder {
 public:
  explicit ChainedStepEncoder(StepCodecOptions options = {}, uint64_t block_steps = 0)
      : encoder_(options), position_(senderChainSteps(block_steps)) {}
  void setBlockSteps(uint64_t block_steps) {
    position_.setBlockSteps(senderChainSteps(block_steps));
    encoder_.reset();
  }
  // Appends the encoding of `rec` to *out. REQUIRES: rec canonical.
  void encode(const StepRecord& rec, std::string* out) {
    if (position_.startsChain(rec.attempt, rec.step)) encoder_.reset();
    position_.advance(rec.attempt, rec.step);
    encoder_.encode(rec, out);
  }
  void reset() {
    encoder_.reset();
    position_.reset();
  }

 private:
  StepEncoder encoder_;
  ChainPosition position_;
};

}  // namespace argus::model
