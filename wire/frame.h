// Framing of the ingest protocol (docs/wire/protocol.md, "Framing").
//
// A frame is a 4-byte little-endian body length followed by the body: exactly one Cap'n
// Proto message in the standard unpacked serialization (segment table + segments). The
// length is checked against the limit before a single body byte is read or allocated,
// and the body is parsed with traversal and nesting limits, so a hostile peer can neither
// make us allocate more than the limit nor walk a pointer loop.
//
// No Boost here: this file is linked into the capture shim.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace argus::wire {

inline constexpr size_t kFrameHeaderBytes = 4;
inline constexpr uint32_t kDefaultMaxFrameBytes = 16u << 20;  // 16 MiB
// The smallest possible Cap'n Proto message: a segment table (8 bytes) and a root pointer.
inline constexpr uint32_t kMinFrameBodyBytes = 16;

struct FrameLimits {
  uint32_t max_frame_bytes = kDefaultMaxFrameBytes;  // body bytes, header excluded
  // Cap'n Proto nesting limit; our schema is at most 4 levels deep.
  int nesting_limit = 16;
  // Words the reader may traverse, as a multiple of the body size in words. A well-formed
  // message traverses each word once; amplification (many pointers to one object) does not.
  uint32_t traversal_factor = 2;
};

// Parses a frame header. Returns the body length in *body_bytes, or InvalidArgument when
// the length exceeds the limit, is smaller than any message, or is not a multiple of 8.
// REQUIRES: header points at kFrameHeaderBytes bytes.
Status parseFrameHeader(const uint8_t* header, const FrameLimits& limits, uint32_t* body_bytes);

// Writes the 4-byte little-endian header for a body of `body_bytes`.
void putFrameHeader(uint32_t body_bytes, uint8_t* header);

// An 8-byte aligned buffer for one frame body (Cap'n Proto reads words in place).
// Reused across frames: assign() keeps the capacity, shrink() gives it back.
class FrameBody {
 public:
  // Makes room for `bytes` body bytes and returns where to put them.
  // REQUIRES: bytes % 8 == 0 (parseFrameHeader guarantees it).
  uint8_t* prepare(size_t bytes);
  void assign(const void* data, size_t bytes);
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(words_.data()); }
  size_t size() const { return bytes_; }
  std::string_view view() const { return {reinterpret_cast<const char*>(words_.data()), bytes_}; }
  // Frees the storage when it is larger than `keep_bytes` (after one large frame).
  void shrink(size_t keep_bytes);

 private:
  std::vector<uint64_t> words_;
  size_t bytes_ = 0;
};

}  // namespace argus::wire
