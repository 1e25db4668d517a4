// Framing: see frame.h and docs/wire/protocol.md.
#include "wire/frame.h"

#include <cstring>

namespace argus::wire {

Status parseFrameHeader(const uint8_t* header, const FrameLimits& limits, uint32_t* body_bytes) {
  uint32_t n = static_cast<uint32_t>(header[0]) | static_cast<uint32_t>(header[1]) << 8 |
               static_cast<uint32_t>(header[2]) << 16 | static_cast<uint32_t>(header[3]) << 24;
  if (n > limits.max_frame_bytes) {
    return Status::invalidArgument("frame of " + std::to_string(n) + " bytes exceeds the limit of " +
                                   std::to_string(limits.max_frame_bytes) + " bytes");
  }
  if (n < kMinFrameBodyBytes) {
    return Status::invalidArgument("frame of " + std::to_string(n) + " bytes is shorter than any message (" +
                                   std::to_string(kMinFrameBodyBytes) + " bytes)");
  }
  if (n % 8 != 0) {
    return Status::invalidArgument("frame length " + std::to_string(n) + " is not a multiple of 8 (Cap'n Proto words)");
  }
  *body_bytes = n;
  return Status::ok();
}

void putFrameHeader(uint32_t body_bytes, uint8_t* header) {
  header[0] = static_cast<uint8_t>(body_bytes);
  header[1] = static_cast<uint8_t>(body_bytes >> 8);
  header[2] = static_cast<uint8_t>(body_bytes >> 16);
  header[3] = static_cast<uint8_t>(body_bytes >> 24);
}

uint8_t* FrameBody::prepare(size_t bytes) {
  assert(bytes % 8 == 0 && "frame bodies are whole words");
  size_t words = bytes / 8;
  if (words_.size() < words) words_.resize(words);
  bytes_ = bytes;
  return reinterpret_cast<uint8_t*>(words_.data());
}

void FrameBody::assign(const void* data, size_t bytes) {
  size_t words = (bytes + 7) / 8;
  if (words_.size() < words) words_.resize(words);
  if (words > 0) words_[words - 1] = 0;
  if (bytes > 0) std::memcpy(words_.data(), data, bytes);
  bytes_ = bytes;
}

void FrameBody::shrink(size_t keep_bytes) {
  if (words_.size() * 8 > keep_bytes) {
    std::vector<uint64_t>().swap(words_);
    bytes_ = 0;
  }
}

}  // namespace argus::wire
