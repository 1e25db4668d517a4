// Wire framing and message codecs: round trips, and hostile frames that must become clean
// errors (never a crash, never an allocation beyond the limit).
#include <capnp/any.h>
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "wire/argus.capnp.h"
#include "wire/frame.h"
#include "wire/messages.h"

using namespace argus;
using namespace argus::wire;

namespace {

// Splits an encoded frame into its header length and an aligned body.
uint32_t bodyOf(const std::string& frame, FrameBody* body) {
  REQUIRE(frame.size() >= kFrameHeaderBytes);
  uint32_t n = 0;
  REQUIRE(parseFrameHeader(reinterpret_cast<const uint8_t*>(frame.data()), FrameLimits{}, &n).isOk());
  REQUIRE(n == frame.size() - kFrameHeaderBytes);
  body->assign(frame.data() + kFrameHeaderBytes, n);
  return n;
}

ClientMessage decodeClient(const std::string& frame) {
  FrameBody body;
  bodyOf(frame, &body);
  ClientMessage m;
  Status s = decodeClientMessage(body, FrameLimits{}, &m);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  return m;
}

ServerMessage decodeServer(const std::string& frame) {
  FrameBody body;
  bodyOf(frame, &body);
  ServerMessage m;
  Status s = decodeServerMessage(body, FrameLimits{}, &m);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  return m;
}

std::string frameFromBuilder(capnp::MessageBuilder& b) {
  auto words = capnp::messageToFlatArray(b);
  std::string out(kFrameHeaderBytes, '\0');
  putFrameHeader(static_cast<uint32_t>(words.size() * 8), reinterpret_cast<uint8_t*>(out.data()));
  out.append(reinterpret_cast<const char*>(words.begin()), words.size() * 8);
  return out;
}

Status decodeClientBody(std::string_view bytes, ClientMessage* m, FrameLimits limits = {}) {
  FrameBody body;
  body.assign(bytes.data(), bytes.size());
  return decodeClientMessage(body, limits, m);
}

}  // namespace

TEST_CASE("frame header: limits are checked before the body") {
  uint8_t h[4];
  uint32_t n = 0;
  FrameLimits limits;
  limits.max_frame_bytes = 1024;
  putFrameHeader(1024, h);
  CHECK(parseFrameHeader(h, limits, &n).isOk());
  CHECK(n == 1024);
  putFrameHeader(1032, h);
  Status s = parseFrameHeader(h, limits, &n);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK(s.message().find("exceeds the limit") != std::string::npos);
  putFrameHeader(0xffffffffu, h);
  CHECK(!parseFrameHeader(h, limits, &n).isOk());
  putFrameHeader(8, h);
  CHECK(!parseFrameHeader(h, limits, &n).isOk());
  putFrameHeader(20, h);
  CHECK(parseFrameHeader(h, limits, &n).message().find("multiple of 8") != std::string::npos);
  // Little-endian on the wire.
  putFrameHeader(0x01020304, h);
  CHECK(h[0] == 0x04);
  CHECK(h[3] == 0x01);
}

TEST_CASE("Hello round trip") {
  Hello h;
  h.job = "llama-70b.run_3";
  h.auth_token = "s3cret";
  h.topology.rank = 4711;
  h.topology.world_size = 10240;
  h.topology.host = "node-17";
  h.topology.local_rank = 7;
  h.topology.device = 7;
  h.topology.tp_rank = 3;
  h.topology.tp_size = 8;
  h.topology.pp_rank = 2;
  h.topology.pp_size = 4;
  h.topology.dp_rank = 147;
  h.topology.dp_size = 320;
  h.topology.cp_rank = 0;
  h.topology.cp_size = 1;
  h.topology.ep_rank = 1;
  h.topology.ep_size = 2;
  h.clock_unix_ns = 1700000000123456789;
  h.clock_monotonic_ns = 987654321;
  h.client = "argus-test/0.1";
  ClientMessage m = decodeClient(encodeHello(h));
  REQUIRE(m.kind == ClientMessage::Kind::kHello);
  CHECK(m.hello.protocol_version == kProtocolVersion);
  CHECK(m.hello.job == h.job);
  CHECK(m.hello.auth_token == h.auth_token);
  CHECK(m.hello.topology == h.topology);
  CHECK(m.hello.clock_unix_ns == h.clock_unix_ns);
  CHECK(m.hello.clock_monotonic_ns == h.clock_monotonic_ns);
  CHECK(m.hello.encoding == kStepEncodingVersion);
  CHECK(m.hello.client == h.client);
}

TEST_CASE("Hello with an invalid job id is refused") {
  for (std::string job : {std::string(), std::string("a b"), std::string(129, 'x'), std::string("job/1"), std::string("\x01\xff")}) {
    Hello h;
    h.job = job;
    FrameBody body;
    bodyOf(encodeHello(h), &body);
    ClientMessage m;
    Status s = decodeClientMessage(body, FrameLimits{}, &m);
    CHECK_MESSAGE(s.code() == Status::Code::kInvalidArgument, s.toString());
    CHECK(s.message().find("invalid job id") != std::string::npos);
  }
}

TEST_CASE("Dictionary round trip") {
  Dictionary d;
  d.kernels.push_back({0x1234567890abcdefull, "ampere_sgemm_128x64_tn", {1, 2, 3, 128, 1, 1}});
  d.kernels.push_back({42, "", {}});
  d.stacks.push_back({7, {"leaf", "mid", "main"}});
  d.stacks.push_back({8, {}});
  d.strings.push_back({1, "forward"});
  ClientMessage m = decodeClient(encodeDictionary(d));
  REQUIRE(m.kind == ClientMessage::Kind::kDictionary);
  CHECK(m.dictionary.kernels == d.kernels);
  CHECK(m.dictionary.stacks == d.stacks);
  CHECK(m.dictionary.strings == d.strings);
}

TEST_CASE("StepBatch round trip keeps record bytes exactly") {
  std::vector<std::string> records = {std::string("\x01\x02\x03", 3), std::string(1000, '\0'), std::string("x"),
                                      std::string(65536, '\x7f')};
  FrameBody body;  // the record views point into it: keep it alive while they are used
  bodyOf(encodeStepBatch(17, records), &body);
  ClientMessage m;
  REQUIRE(decodeClientMessage(body, FrameLimits{}, &m).isOk());
  REQUIRE(m.kind == ClientMessage::Kind::kSteps);
  CHECK(m.steps.first_seq == 17);
  REQUIRE(m.steps.records.size() == records.size());
  for (size_t i = 0; i < records.size(); ++i) CHECK(m.steps.records[i] == records[i]);
}

TEST_CASE("StepBatch protocol rules") {
  ClientMessage m;
  FrameBody body;
  bodyOf(encodeStepBatch(0, std::vector<std::string>{"a"}), &body);
  CHECK(decodeClientMessage(body, FrameLimits{}, &m).message().find("start at 1") != std::string::npos);
  bodyOf(encodeStepBatch(1, std::vector<std::string>{}), &body);
  CHECK(decodeClientMessage(body, FrameLimits{}, &m).message().find("no records") != std::string::npos);
  bodyOf(encodeStepBatch(1, std::vector<std::string>{"a", ""}), &body);
  CHECK(decodeClientMessage(body, FrameLimits{}, &m).message().find("empty") != std::string::npos);
}

TEST_CASE("dictionary text over kMaxDictTextBytes, or a stack over kMaxStackFrames, is refused naming it") {
  FrameBody body;
  ClientMessage m;
  auto refused = [&](const Dictionary& d, const char* what) {
    bodyOf(encodeDictionary(d), &body);
    Status s = decodeClientMessage(body, FrameLimits{}, &m);
    CHECK(s.code() == Status::Code::kInvalidArgument);
    CHECK_MESSAGE(s.message().find(what) != std::string::npos, s.message());
  };
  Dictionary d;
  d.kernels.push_back({0xabc, std::string(kMaxDictTextBytes + 1, 'k'), {}});
  refused(d, "kernel name of 65537 bytes (id 0000000000000abc) exceeds 65536 bytes");
  d = {};
  d.stacks.push_back({7, {"main", std::string(kMaxDictTextBytes + 1, 'f')}});
  refused(d, "stack frame of 65537 bytes");
  d = {};
  d.stacks.push_back({7, std::vector<std::string>(kMaxStackFrames + 1, "f")});
  refused(d, "stack of 4097 frames exceeds 4096");
  d = {};
  d.strings.push_back({3, std::string(kMaxDictTextBytes + 1, 's')});
  refused(d, "string of 65537 bytes");
  d = {};
  d.kernels.push_back({0xabc, std::string(kMaxDictTextBytes, 'k'), {}});  // at the limit: fine
  bodyOf(encodeDictionary(d), &body);
  CHECK(decodeClientMessage(body, FrameLimits{}, &m).isOk());
}

TEST_CASE("Goodbye and server messages round trip") {
  CHECK(decodeClient(encodeGoodbye()).kind == ClientMessage::Kind::kGoodbye);

  ServerMessage w = decodeServer(encodeWelcome({kProtocolVersion, 99, 1 << 20, 1024}));
  REQUIRE(w.kind == ServerMessage::Kind::kWelcome);
  CHECK(w.welcome.session_id == 99);
  CHECK(w.welcome.max_frame_bytes == (1u << 20));
  CHECK(w.welcome.block_steps == 1024);

  ServerMessage a = decodeServer(encodeAck(123456789012ull));
  REQUIRE(a.kind == ServerMessage::Kind::kAck);
  CHECK(a.ack_up_to == 123456789012ull);

  Control c;
  c.kind = Control::Kind::kDumpFlightRecorder;
  c.from_step = 10;
  c.to_step = 20;
  ServerMessage cm = decodeServer(encodeControl(c));
  REQUIRE(cm.kind == ServerMessage::Kind::kControl);
  CHECK(cm.control.kind == Control::Kind::kDumpFlightRecorder);
  CHECK(cm.control.from_step == 10);
  CHECK(cm.control.to_step == 20);
  c = {};
  c.kind = Control::Kind::kDraining;
  c.draining_ms = 1500;
  cm = decodeServer(encodeControl(c));
  CHECK(cm.control.kind == Control::Kind::kDraining);
  CHECK(cm.control.draining_ms == 1500);

  ServerMessage cl = decodeServer(encodeClose(Status::Code::kPermissionDenied, "wrong auth token"));
  REQUIRE(cl.kind == ServerMessage::Kind::kClose);
  CHECK(cl.close.code == Status::Code::kPermissionDenied);
  CHECK(cl.close.reason == "wrong auth token");
  CHECK(cl.close.toStatus().code() == Status::Code::kPermissionDenied);
}

TEST_CASE("hostile: truncated bodies are Corruption") {
  std::string frame = encodeStepBatch(1, std::vector<std::string>{std::string(200, 'r'), std::string(300, 's')});
  std::string body = frame.substr(kFrameHeaderBytes);
  for (size_t cut = 8; cut < body.size(); cut += 8) {
    ClientMessage m;
    Status s = decodeClientBody(std::string_view(body).substr(0, cut), &m);
    CHECK(!s.isOk());
    if (cut >= kMinFrameBodyBytes) CHECK(s.code() == Status::Code::kCorruption);
  }
  // Trailing bytes after the message are refused too.
  ClientMessage m;
  CHECK(decodeClientBody(body + std::string(8, '\0'), &m).code() == Status::Code::kCorruption);
}

TEST_CASE("hostile: random bytes never crash") {
  std::mt19937_64 rng(12345);
  int ok = 0;
  for (int i = 0; i < 20000; ++i) {
    size_t words = 2 + rng() % 64;
    std::string bytes(words * 8, '\0');
    for (auto& c : bytes) c = static_cast<char>(rng());
    // Half the time make the segment table plausible so the parser gets further.
    if (i % 2 == 0) {
      uint32_t zero = 0, size = static_cast<uint32_t>(words - 1);
      std::memcpy(bytes.data(), &zero, 4);
      std::memcpy(bytes.data() + 4, &size, 4);
    }
    ClientMessage cm;
    ServerMessage sm;
    if (decodeClientBody(bytes, &cm).isOk()) ++ok;
    FrameBody body;
    body.assign(bytes.data(), bytes.size());
    (void)decodeServerMessage(body, FrameLimits{}, &sm);
  }
  MESSAGE("random bodies that happened to decode: " << ok);
}

TEST_CASE("hostile: mutated valid frames never crash") {
  Hello h;
  h.job = "job";
  Dictionary d;
  d.kernels.push_back({1, "k", {}});
  d.stacks.push_back({2, {"a", "b"}});
  std::vector<std::string> frames = {encodeHello(h), encodeDictionary(d),
                                     encodeStepBatch(1, std::vector<std::string>{"abc", "defgh"})};
  std::mt19937_64 rng(7);
  for (const auto& f : frames) {
    std::string body = f.substr(kFrameHeaderBytes);
    for (int i = 0; i < 5000; ++i) {
      std::string mutated = body;
      int flips = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < flips; ++k) mutated[rng() % mutated.size()] ^= static_cast<char>(1 << (rng() % 8));
      ClientMessage m;
      (void)decodeClientBody(mutated, &m);
    }
  }
}

TEST_CASE("hostile: segment table claiming huge segments") {
  // One segment claiming 2^31 words in a 16-byte body.
  std::string bytes(16, '\0');
  uint32_t zero = 0, huge = 0x80000000u;
  std::memcpy(bytes.data(), &zero, 4);
  std::memcpy(bytes.data() + 4, &huge, 4);
  ClientMessage m;
  Status s = decodeClientBody(bytes, &m);
  CHECK(s.code() == Status::Code::kCorruption);
  // 2^32-1 segments.
  uint32_t many = 0xffffffffu;
  std::memcpy(bytes.data(), &many, 4);
  CHECK(decodeClientBody(bytes, &m).code() == Status::Code::kCorruption);
}

TEST_CASE("hostile: deep nesting hits the nesting limit") {
  // A ClientMessage whose hello pointer leads into 100 nested structs.
  capnp::MallocMessageBuilder b;
  // data word 0 = union discriminant 0 (hello)
  auto node = b.getRoot<capnp::AnyPointer>().initAsAnyStruct(1, 1);
  for (int depth = 0; depth < 100; ++depth) node = node.getPointerSection()[0].initAsAnyStruct(0, 1);
  node.getPointerSection()[0].setAs<capnp::Text>("bottom");
  std::string frame = frameFromBuilder(b);
  FrameBody body;
  bodyOf(frame, &body);
  ClientMessage m;
  Status s = decodeClientMessage(body, FrameLimits{}, &m);
  CHECK(s.code() == Status::Code::kCorruption);
  CHECK(s.message().find("nest") != std::string::npos);
}

TEST_CASE("hostile: pointer amplification hits the traversal limit") {
  // A list of 10,000 pointers all pointing at one 1,000-word struct: reading every
  // element would traverse 10M words from a ~12k-word frame.
  capnp::MallocMessageBuilder b(20000);  // one segment
  auto msg = b.initRoot<schema::ClientMessage>();
  auto batch = msg.initSteps();
  batch.setFirstSeq(1);
  auto records = batch.initRecords(10000);
  std::string big(8000, 'z');
  records.set(0, capnp::Data::Reader(reinterpret_cast<const kj::byte*>(big.data()), big.size()));
  auto words = capnp::messageToFlatArray(b);
  REQUIRE(b.getSegmentsForOutput().size() == 1);
  // Rewrite every list pointer to point at element 0's data (far pointers are absent in a
  // single-segment message, so each is a relative offset we can compute).
  auto* w = reinterpret_cast<uint64_t*>(words.begin());
  size_t seg0 = 1;  // segment table is one word for one segment
  // Locate the records list: find the pointer whose target holds 'zzzz'.
  size_t list_start = 0, target = 0;
  for (size_t i = seg0; i < words.size(); ++i) {
    uint64_t p = w[i];
    if ((p & 3) == 1 && ((p >> 32) & 7) == 2 && (p >> 35) == 8000) {
      target = i + 1 + static_cast<size_t>(static_cast<int32_t>(p & 0xffffffffu) >> 2);
      list_start = i;
      break;
    }
  }
  REQUIRE(list_start != 0);
  for (size_t k = 1; k < 10000; ++k) {
    size_t at = list_start + k;
    int32_t offset = static_cast<int32_t>(target) - static_cast<int32_t>(at + 1);
    w[at] = (static_cast<uint64_t>(static_cast<uint32_t>(offset << 2) | 1)) | (uint64_t{2} << 32) | (uint64_t{8000} << 35);
  }
  FrameBody body;
  body.assign(words.begin(), words.size() * 8);
  ClientMessage m;
  Status s = decodeClientMessage(body, FrameLimits{}, &m);
  CHECK(s.code() == Status::Code::kCorruption);
  CHECK(s.message().find("limit") != std::string::npos);
}

TEST_CASE("hostile: a server message where a client message is expected") {
  std::string frame = encodeClose(Status::Code::kOk, "bye");
  FrameBody body;
  bodyOf(frame, &body);
  ClientMessage m;
  Status s = decodeClientMessage(body, FrameLimits{}, &m);
  // Close is union member 3 = goodbye in ClientMessage: decodes, but as Goodbye; either
  // way nothing crashes and the kind is one the session checks.
  if (s.isOk()) CHECK(m.kind == ClientMessage::Kind::kGoodbye);
}

TEST_CASE("FrameBody alignment and reuse") {
  FrameBody body;
  uint8_t* p = body.prepare(64);
  CHECK(reinterpret_cast<uintptr_t>(p) % 8 == 0);
  body.assign("abcdefgh", 8);
  CHECK(body.view() == "abcdefgh");
  body.prepare(1 << 20);
  body.shrink(1 << 16);
  CHECK(body.size() == 0);
}
