// Fuzzes wire::parseFrameHeader and wire::decodeServerMessage (what a capture client reads
// from argusd).
//
// Input: 4 frame-header bytes, then the frame body (truncated to whole words). Invariant:
// an accepted message re-encodes with its encoder and decodes to the same fields.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/wire_fuzz_util.h"
#include "wire/messages.h"

using namespace argus::wire;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FrameBody body;
  argus::fuzz::frameFromInput(argus::fuzz::asView(data, size), &body);
  FrameLimits limits;
  ServerMessage msg;
  if (!decodeServerMessage(body, limits, &msg).isOk()) return 0;

  std::string frame;
  switch (msg.kind) {
    case ServerMessage::Kind::kWelcome: frame = encodeWelcome(msg.welcome); break;
    case ServerMessage::Kind::kAck: frame = encodeAck(msg.ack_up_to); break;
    case ServerMessage::Kind::kControl: frame = encodeControl(msg.control); break;
    case ServerMessage::Kind::kClose:
      (void)msg.close.toStatus();
      frame = encodeClose(msg.close.code, msg.close.reason);
      break;
  }
  FrameBody body2;
  argus::fuzz::bodyOfFrame(frame, &body2);
  ServerMessage back;
  FUZZ_CHECK(decodeServerMessage(body2, limits, &back).isOk());
  FUZZ_CHECK(back.kind == msg.kind);
  switch (msg.kind) {
    case ServerMessage::Kind::kWelcome:
      FUZZ_CHECK(back.welcome.protocol_version == msg.welcome.protocol_version);
      FUZZ_CHECK(back.welcome.session_id == msg.welcome.session_id);
      FUZZ_CHECK(back.welcome.max_frame_bytes == msg.welcome.max_frame_bytes);
      FUZZ_CHECK(back.welcome.block_steps == msg.welcome.block_steps);
      break;
    case ServerMessage::Kind::kAck: FUZZ_CHECK(back.ack_up_to == msg.ack_up_to); break;
    case ServerMessage::Kind::kControl:
      FUZZ_CHECK(back.control.kind == msg.control.kind);
      FUZZ_CHECK(back.control.from_step == msg.control.from_step);
      FUZZ_CHECK(back.control.to_step == msg.control.to_step);
      FUZZ_CHECK(back.control.draining_ms == msg.control.draining_ms);
      break;
    case ServerMessage::Kind::kClose:
      FUZZ_CHECK(back.close.code == msg.close.code);
      FUZZ_CHECK(back.close.reason == msg.close.reason.substr(0, 4096));  // the encoder's cap
      break;
  }
  return 0;
}
