// Fuzzes wire::parseFrameHeader and wire::decodeClientMessage (what argusd reads from a
// capture client).
//
// Input: 4 frame-header bytes, then the frame body (truncated to whole words). Invariant:
// an accepted message re-encodes with its encoder and decodes to the same fields.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/fuzz/wire_fuzz_util.h"
#include "wire/messages.h"

using namespace argus::wire;

namespace {

void checkHello(const Hello& a, const Hello& b) {
  FUZZ_CHECK(a.protocol_version == b.protocol_version);
  FUZZ_CHECK(a.job == b.job);
  FUZZ_CHECK(a.auth_token == b.auth_token);
  FUZZ_CHECK(a.topology == b.topology);
  FUZZ_CHECK(a.clock_unix_ns == b.clock_unix_ns);
  FUZZ_CHECK(a.clock_monotonic_ns == b.clock_monotonic_ns);
  FUZZ_CHECK(a.encoding == b.encoding);
  FUZZ_CHECK(a.client == b.client);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FrameBody body;
  argus::fuzz::frameFromInput(argus::fuzz::asView(data, size), &body);
  FrameLimits limits;
  ClientMessage msg;
  if (!decodeClientMessage(body, limits, &msg).isOk()) return 0;
  (void)clientMessageKindName(msg.kind);

  std::string frame;
  switch (msg.kind) {
    case ClientMessage::Kind::kHello: frame = encodeHello(msg.hello); break;
    case ClientMessage::Kind::kDictionary: frame = encodeDictionary(msg.dictionary); break;
    case ClientMessage::Kind::kSteps: {
      FUZZ_CHECK(!msg.steps.records.empty() && msg.steps.records.size() <= kMaxRecordsPerBatch);
      FUZZ_CHECK(msg.steps.first_seq >= 1);
      std::vector<std::string> records(msg.steps.records.begin(), msg.steps.records.end());
      frame = encodeStepBatch(msg.steps.first_seq, records);
      break;
    }
    case ClientMessage::Kind::kGoodbye: frame = encodeGoodbye(); break;
  }
  FrameBody body2;
  argus::fuzz::bodyOfFrame(frame, &body2);
  ClientMessage back;
  FUZZ_CHECK(decodeClientMessage(body2, limits, &back).isOk());
  FUZZ_CHECK(back.kind == msg.kind);
  switch (msg.kind) {
    case ClientMessage::Kind::kHello: checkHello(msg.hello, back.hello); break;
    case ClientMessage::Kind::kDictionary:
      FUZZ_CHECK(back.dictionary.kernels == msg.dictionary.kernels);
      FUZZ_CHECK(back.dictionary.stacks == msg.dictionary.stacks);
      FUZZ_CHECK(back.dictionary.strings == msg.dictionary.strings);
      break;
    case ClientMessage::Kind::kSteps:
      FUZZ_CHECK(back.steps.first_seq == msg.steps.first_seq);
      FUZZ_CHECK(back.steps.records == msg.steps.records);  // compares the bytes
      break;
    case ClientMessage::Kind::kGoodbye: break;
  }
  return 0;
}
