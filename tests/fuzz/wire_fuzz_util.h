// Shared by the wire fuzz targets: turning fuzz bytes into a frame header and an 8-byte
// aligned FrameBody, and taking the body back out of an encoder's frame.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_util.h"
#include "wire/frame.h"

namespace argus::fuzz {

// Input: 4 header bytes, then the body. parseFrameHeader runs on the header (its contract
// checked); the body is truncated to a multiple of 8 bytes, as the framing guarantees,
// and copied into an aligned FrameBody.
inline void frameFromInput(std::string_view in, wire::FrameBody* body) {
  uint8_t header[wire::kFrameHeaderBytes] = {};
  for (size_t i = 0; i < wire::kFrameHeaderBytes && i < in.size(); ++i) header[i] = static_cast<uint8_t>(in[i]);
  in.remove_prefix(std::min(in.size(), wire::kFrameHeaderBytes));
  wire::FrameLimits limits;
  uint32_t body_bytes = 0;
  if (wire::parseFrameHeader(header, limits, &body_bytes).isOk()) {
    FUZZ_CHECK(body_bytes % 8 == 0);
    FUZZ_CHECK(body_bytes >= wire::kMinFrameBodyBytes);
    FUZZ_CHECK(body_bytes <= limits.max_frame_bytes);
    uint8_t again[wire::kFrameHeaderBytes];
    wire::putFrameHeader(body_bytes, again);
    FUZZ_CHECK(std::memcmp(again, header, sizeof header) == 0);
  }
  body->assign(in.data(), in.size() / 8 * 8);
}

// The body of an encoder's frame (header checked), in an aligned FrameBody.
inline void bodyOfFrame(const std::string& frame, wire::FrameBody* body) {
  FUZZ_CHECK(frame.size() >= wire::kFrameHeaderBytes);
  uint32_t body_bytes = 0;
  FUZZ_CHECK(wire::parseFrameHeader(reinterpret_cast<const uint8_t*>(frame.data()), wire::FrameLimits{}, &body_bytes).isOk());
  FUZZ_CHECK(body_bytes == frame.size() - wire::kFrameHeaderBytes);
  body->assign(frame.data() + wire::kFrameHeaderBytes, body_bytes);
}

}  // namespace argus::fuzz
