// The ingest protocol's messages as plain C++ structs, and their encoders and decoders
// (schema: wire/argus.capnp; prose: docs/wire/protocol.md).
//
// Decoders never throw: malformed Cap'n Proto (bad segment table, out-of-bounds pointer,
// traversal or nesting limit, wrong pointer kind) becomes a Corruption status, and a
// message that parses but breaks a protocol rule (bad job id, empty StepBatch) becomes
// InvalidArgument. Encoders return a whole frame (header + body), ready to write.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/step_record.h"
#include "wire/frame.h"

namespace argus::wire {

// Must equal argus.capnp's protocolVersion (checked in messages.cpp).
inline constexpr uint16_t kProtocolVersion = 2;
// The StepRecord encoding that Hello.encoding names (model::StepEncoder's format): what
// senders write, and the oldest one argusd still reads.
inline constexpr uint8_t kStepEncodingVersion = 2;
inline constexpr uint8_t kOldestStepEncodingVersion = 1;
// Upper bound on records in one StepBatch: bounds per-frame work before decoding.
inline constexpr uint32_t kMaxRecordsPerBatch = 65536;
// Dictionary text: a kernel name, a stack frame or a string, in bytes. Far above any real
// name (the longest C++ template kernel names run to a few KB), below what the store's meta
// records read back (docs/format/keys.md), so nothing acknowledged is unreadable.
inline constexpr size_t kMaxDictTextBytes = 65536;
inline constexpr size_t kMaxStackFrames = 4096;

// --- client -> server ---------------------------------------------------------------------

struct Hello {
  uint16_t protocol_version = kProtocolVersion;
  std::string job;
  std::string auth_token;
  model::RankTopology topology;
  int64_t clock_unix_ns = 0;
  int64_t clock_monotonic_ns = 0;
  uint8_t encoding = kStepEncodingVersion;
  std::string client;
};

struct Dictionary {
  std::vector<model::KernelDictEntry> kernels;
  std::vector<model::StackDictEntry> stacks;
  std::vector<model::StringDictEntry> strings;
  bool empty() const { return kernels.empty() && stacks.empty() && strings.empty(); }
  size_t entryCount() const { return kernels.size() + stacks.size() + strings.size(); }
};

// Records are views into the frame body they were decoded from: valid while that
// FrameBody is neither reused nor destroyed.
struct StepBatchView {
  uint64_t first_seq = 0;
  std::vector<std::string_view> records;  // each one StepEncoder output
};

struct ClientMessage {
  // Do not renumber: mirrors the ClientMessage union order in argus.capnp.
  enum class Kind : uint8_t { kHello = 0, kDictionary = 1, kSteps = 2, kGoodbye = 3 };
  Kind kind = Kind::kGoodbye;
  Hello hello;            // kHello
  Dictionary dictionary;  // kDictionary
  StepBatchView steps;    // kSteps
};

// --- server -> client ---------------------------------------------------------------------

struct Welcome {
  uint16_t protocol_version = kProtocolVersion;
  uint64_t session_id = 0;
  uint32_t max_frame_bytes = kDefaultMaxFrameBytes;
  // Every record whose (attempt, step / block_steps) differs from the previous record's
  // must be a keyframe (docs/wire/step-record.md, "Chains"). A power of two.
  uint32_t block_steps = 256;
};

struct Control {
  enum class Kind : uint8_t { kDumpFlightRecorder = 0, kDraining = 1 };
  Kind kind = Kind::kDraining;
  uint64_t from_step = 0, to_step = 0;  // kDumpFlightRecorder, inclusive
  uint32_t draining_ms = 0;             // kDraining: reconnect after this long
};

struct CloseMsg {
  Status::Code code = Status::Code::kOk;
  std::string reason;
  // The close as a Status (OK for a clean close).
  Status toStatus() const { return Status::fromCode(code, reason); }
};

struct ServerMessage {
  enum class Kind : uint8_t { kWelcome = 0, kAck = 1, kControl = 2, kClose = 3 };
  Kind kind = Kind::kClose;
  Welcome welcome;
  uint64_t ack_up_to = 0;  // kAck
  Control control;
  CloseMsg close;
};

// --- decoding -----------------------------------------------------------------------------

// Decodes one frame body. For kSteps, out->steps.records point into `body`.
// Also validates: Hello job id syntax, StepBatch first_seq >= 1, 1..kMaxRecordsPerBatch
// records, dictionary strings as UTF-8-agnostic bytes of bounded size.
Status decodeClientMessage(const FrameBody& body, const FrameLimits& limits, ClientMessage* out);
Status decodeServerMessage(const FrameBody& body, const FrameLimits& limits, ServerMessage* out);

// --- encoding (each returns a whole frame: header + body) ---------------------------------

std::string encodeHello(const Hello& hello);
std::string encodeDictionary(const Dictionary& dict);
std::string encodeStepBatch(uint64_t first_seq, std::span<const std::string> records);
std::string encodeGoodbye();
std::string encodeWelcome(const Welcome& welcome);
std::string encodeAck(uint64_t up_to);
std::string encodeControl(const Control& control);
std::string encodeClose(Status::Code code, std::string_view reason);

const char* clientMessageKindName(ClientMessage::Kind kind);

}  // namespace argus::wire
