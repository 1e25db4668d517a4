// Encoders and decoders for the ingest protocol's messages (see messages.h).
#include "wire/messages.h"

#include <cstdio>

#include <capnp/any.h>
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <algorithm>
#include <cstring>

#include "wire/argus.capnp.h"

namespace argus::wire {

static_assert(kProtocolVersion == schema::PROTOCOL_VERSION, "kProtocolVersion must match argus.capnp");

namespace {

// --- decoding helpers ---------------------------------------------------------------------

// Parses `body` as one Cap'n Proto message with the limits applied and calls fn(root).
// Every KJ exception (malformed pointers, limits, bad text) becomes Corruption.
template <typename Root, typename Fn>
Status withRoot(const FrameBody& body, const FrameLimits& limits, const char* what, Fn&& fn) {
  if (body.size() < kMinFrameBodyBytes || body.size() % 8 != 0) {
    return Status::corruption(std::string(what) + ": body of " + std::to_string(body.size()) +
                              " bytes is not a Cap'n Proto message");
  }
  kj::ArrayPtr<const capnp::word> words(reinterpret_cast<const capnp::word*>(body.data()), body.size() / 8);
  capnp::ReaderOptions options;
  options.traversalLimitInWords = std::max<uint64_t>(256, static_cast<uint64_t>(words.size()) * limits.traversal_factor);
  options.nestingLimit = limits.nesting_limit;
  try {
    // The segment table must describe exactly this frame: no trailing bytes, no overrun.
    size_t expected = capnp::expectedSizeInWordsFromPrefix(words);
    if (expected != words.size()) {
      return Status::corruption(std::string(what) + ": segment table describes " + std::to_string(expected * 8) +
                                " bytes but the frame holds " + std::to_string(words.size() * 8));
    }
    {
      // Walk the whole message once (unknown fields included) so that the nesting and
      // traversal limits hold for everything in it, not only the fields we read.
      capnp::FlatArrayMessageReader checker(words, options);
      checker.getRoot<capnp::AnyPointer>().targetSize();
    }
    // A fresh reader (fresh traversal budget) for the fields we decode.
    capnp::FlatArrayMessageReader reader(words, options);
    return fn(reader.getRoot<Root>());
  } catch (const kj::Exception& e) {
    return Status::corruption(std::string(what) + ": malformed message: " + e.getDescription().cStr());
  }
}

std::string textOf(capnp::Text::Reader t) { return std::string(t.begin(), t.size()); }

model::RankTopology topologyOf(schema::Topology::Reader t) {
  model::RankTopology out;
  out.rank = t.getRank();
  out.world_size = t.getWorldSize();
  out.host = textOf(t.getHost());
  out.local_rank = t.getLocalRank();
  out.device = t.getDevice();
  out.tp_rank = t.getTpRank();
  out.tp_size = t.getTpSize();
  out.pp_rank = t.getPpRank();
  out.pp_size = t.getPpSize();
  out.dp_rank = t.getDpRank();
  out.dp_size = t.getDpSize();
  out.cp_rank = t.getCpRank();
  out.cp_size = t.getCpSize();
  out.ep_rank = t.getEpRank();
  out.ep_size = t.getEpSize();
  return out;
}

Status decodeHello(schema::Hello::Reader h, Hello* out) {
  out->protocol_version = h.getProtocolVersion();
  out->job = textOf(h.getJob());
  out->auth_token = textOf(h.getAuthToken());
  out->topology = topologyOf(h.getTopology());
  out->clock_unix_ns = h.getClock().getUnixNs();
  out->clock_monotonic_ns = h.getClock().getMonotonicNs();
  out->encoding = h.getEncoding();
  out->client = textOf(h.getClient());
  // The version is checked by the session (it answers with VersionMismatch); the job id
  // syntax is checked here because nothing can be done with a malformed one.
  if (!model::isValidJobId(out->job)) {
    std::string shown = out->job.substr(0, 64);
    for (char& c : shown) if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
    return Status::invalidArgument("invalid job id '" + shown + "' (1-128 bytes of [A-Za-z0-9._-])");
  }
  if (out->topology.host.size() > 1024) return Status::invalidArgument("host name longer than 1024 bytes");
  return Status::ok();
}

Status checkText(capnp::Text::Reader t, const char* what, uint64_t id) {
  if (t.size() <= kMaxDictTextBytes) return Status::ok();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(id));
  return Status::invalidArgument(std::string(what) + " of " + std::to_string(t.size()) + " bytes (id " + hex + ") exceeds " +
                                 std::to_string(kMaxDictTextBytes) + " bytes");
}

Status decodeDictionary(schema::Dictionary::Reader d, Dictionary* out) {
  out->kernels.clear();
  out->stacks.clear();
  out->strings.clear();
  auto kernels = d.getKernels();
  out->kernels.reserve(kernels.size());
  for (auto k : kernels) {
    model::KernelDictEntry e;
    e.signature = k.getSignature();
    ARGUS_RETURN_IF_ERROR(checkText(k.getName(), "kernel name", e.signature));
    e.name = textOf(k.getName());
    e.geometry = {k.getGridX(), k.getGridY(), k.getGridZ(), k.getBlockX(), k.getBlockY(), k.getBlockZ()};
    out->kernels.push_back(std::move(e));
  }
  auto stacks = d.getStacks();
  out->stacks.reserve(stacks.size());
  for (auto s : stacks) {
    model::StackDictEntry e;
    e.stack_id = s.getStackId();
    auto frames = s.getFrames();
    if (frames.size() > kMaxStackFrames) {
      return Status::invalidArgument("stack of " + std::to_string(frames.size()) + " frames exceeds " + std::to_string(kMaxStackFrames));
    }
    e.frames.reserve(frames.size());
    for (auto f : frames) {
      ARGUS_RETURN_IF_ERROR(checkText(f, "stack frame", e.stack_id));
      e.frames.push_back(textOf(f));
    }
    out->stacks.push_back(std::move(e));
  }
  auto strings = d.getStrings();
  out->strings.reserve(strings.size());
  for (auto s : strings) {
    ARGUS_RETURN_IF_ERROR(checkText(s.getText(), "string", s.getId()));
    out->strings.push_back({s.getId(), textOf(s.getText())});
  }
  return Status::ok();
}

Status decodeSteps(schema::StepBatch::Reader b, StepBatchView* out) {
  out->first_seq = b.getFirstSeq();
  out->records.clear();
  if (out->first_seq == 0) return Status::invalidArgument("StepBatch firstSeq is 0 (sequence numbers start at 1)");
  auto records = b.getRecords();
  if (records.size() == 0) return Status::invalidArgument("StepBatch holds no records");
  if (records.size() > kMaxRecordsPerBatch) {
    return Status::invalidArgument("StepBatch holds " + std::to_string(records.size()) + " records, more than " +
                                   std::to_string(kMaxRecordsPerBatch));
  }
  if (out->first_seq > UINT64_MAX - records.size()) return Status::invalidArgument("StepBatch sequence numbers overflow");
  out->records.reserve(records.size());
  for (uint32_t i = 0; i < records.size(); ++i) {
    auto r = records[i];
    if (r.size() == 0) return Status::invalidArgument("StepBatch record " + std::to_string(i) + " is empty");
    out->records.emplace_back(reinterpret_cast<const char*>(r.begin()), r.size());
  }
  return Status::ok();
}

// --- encoding helpers ---------------------------------------------------------------------

// Serializes the builder as one frame: header, segment table, segments.
std::string frameOf(capnp::MessageBuilder& builder) {
  auto segments = builder.getSegmentsForOutput();
  size_t table_words = (segments.size() + 2) / 2;  // u32 count + u32 per segment, word aligned
  size_t words = table_words;
  for (auto s : segments) words += s.size();
  size_t body_bytes = words * 8;
  assert(body_bytes <= UINT32_MAX && "BUG: frame larger than 4 GiB");
  std::string out(kFrameHeaderBytes + body_bytes, '\0');
  auto* p = reinterpret_cast<uint8_t*>(out.data());
  putFrameHeader(static_cast<uint32_t>(body_bytes), p);
  p += kFrameHeaderBytes;
  auto put32 = [&](size_t index, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[index * 4 + i] = static_cast<uint8_t>(v >> (8 * i));
  };
  put32(0, static_cast<uint32_t>(segments.size() - 1));
  for (size_t i = 0; i < segments.size(); ++i) put32(i + 1, static_cast<uint32_t>(segments[i].size()));
  p += table_words * 8;
  for (auto s : segments) {
    std::memcpy(p, s.begin(), s.size() * 8);
    p += s.size() * 8;
  }
  return out;
}

void setTopology(schema::Topology::Builder t, const model::RankTopology& in) {
  t.setRank(in.rank);
  t.setWorldSize(in.world_size);
  t.setHost(capnp::Text::Reader(in.host.data(), in.host.size()));  // not the std::string overload: it stops at a NUL
  t.setLocalRank(in.local_rank);
  t.setDevice(in.device);
  t.setTpRank(in.tp_rank);
  t.setTpSize(in.tp_size);
  t.setPpRank(in.pp_rank);
  t.setPpSize(in.pp_size);
  t.setDpRank(in.dp_rank);
  t.setDpSize(in.dp_size);
  t.setCpRank(in.cp_rank);
  t.setCpSize(in.cp_size);
  t.setEpRank(in.ep_rank);
  t.setEpSize(in.ep_size);
}

capnp::Text::Reader text(std::string_view s) { return capnp::Text::Reader(s.data(), s.size()); }

}  // namespace

const char* clientMessageKindName(ClientMessage::Kind kind) {
  switch (kind) {
    case ClientMessage::Kind::kHello: return "Hello";
    case ClientMessage::Kind::kDictionary: return "Dictionary";
    case ClientMessage::Kind::kSteps: return "StepBatch";
    case ClientMessage::Kind::kGoodbye: return "Goodbye";
  }
  return "unknown";
}

Status decodeClientMessage(const FrameBody& body, const FrameLimits& limits, ClientMessage* out) {
  return withRoot<schema::ClientMessage>(body, limits, "ClientMessage", [&](schema::ClientMessage::Reader m) -> Status {
    switch (m.which()) {
      case schema::ClientMessage::HELLO:
        out->kind = ClientMessage::Kind::kHello;
        return decodeHello(m.getHello(), &out->hello);
      case schema::ClientMessage::DICTIONARY:
        out->kind = ClientMessage::Kind::kDictionary;
        return decodeDictionary(m.getDictionary(), &out->dictionary);
      case schema::ClientMessage::STEPS:
        out->kind = ClientMessage::Kind::kSteps;
        return decodeSteps(m.getSteps(), &out->steps);
      case schema::ClientMessage::GOODBYE:
        out->kind = ClientMessage::Kind::kGoodbye;
        return Status::ok();
    }
    return Status::invalidArgument("unknown ClientMessage kind " + std::to_string(static_cast<int>(m.which())) +
                                   " (newer protocol?)");
  });
}

Status decodeServerMessage(const FrameBody& body, const FrameLimits& limits, ServerMessage* out) {
  return withRoot<schema::ServerMessage>(body, limits, "ServerMessage", [&](schema::ServerMessage::Reader m) -> Status {
    switch (m.which()) {
      case schema::ServerMessage::WELCOME: {
        auto w = m.getWelcome();
        out->kind = ServerMessage::Kind::kWelcome;
        out->welcome = {w.getProtocolVersion(), w.getSessionId(), w.getMaxFrameBytes(), w.getBlockSteps()};
        return Status::ok();
      }
      case schema::ServerMessage::ACK:
        out->kind = ServerMessage::Kind::kAck;
        out->ack_up_to = m.getAck().getUpTo();
        return Status::ok();
      case schema::ServerMessage::CONTROL: {
        auto c = m.getControl();
        out->kind = ServerMessage::Kind::kControl;
        out->control = {};
        switch (c.which()) {
          case schema::Control::DUMP_FLIGHT_RECORDER:
            out->control.kind = Control::Kind::kDumpFlightRecorder;
            out->control.from_step = c.getDumpFlightRecorder().getFromStep();
            out->control.to_step = c.getDumpFlightRecorder().getToStep();
            return Status::ok();
          case schema::Control::DRAINING:
            out->control.kind = Control::Kind::kDraining;
            out->control.draining_ms = c.getDraining();
            return Status::ok();
        }
        return Status::invalidArgument("unknown Control kind " + std::to_string(static_cast<int>(c.which())));
      }
      case schema::ServerMessage::CLOSE: {
        auto c = m.getClose();
        out->kind = ServerMessage::Kind::kClose;
        uint8_t code = c.getCode();
        out->close.code = code <= static_cast<uint8_t>(Status::Code::kAborted) ? static_cast<Status::Code>(code)
                                                                                  : Status::Code::kAborted;
        out->close.reason = textOf(c.getReason());
        return Status::ok();
      }
    }
    return Status::invalidArgument("unknown ServerMessage kind " + std::to_string(static_cast<int>(m.which())));
  });
}

std::string encodeHello(const Hello& hello) {
  capnp::MallocMessageBuilder builder(128);
  auto h = builder.initRoot<schema::ClientMessage>().initHello();
  h.setProtocolVersion(hello.protocol_version);
  h.setJob(text(hello.job));
  h.setAuthToken(text(hello.auth_token));
  setTopology(h.initTopology(), hello.topology);
  auto clock = h.initClock();
  clock.setUnixNs(hello.clock_unix_ns);
  clock.setMonotonicNs(hello.clock_monotonic_ns);
  h.setEncoding(hello.encoding);
  h.setClient(text(hello.client));
  return frameOf(builder);
}

std::string encodeDictionary(const Dictionary& dict) {
  size_t estimate_words = 16 + dict.entryCount() * 8;
  for (const auto& k : dict.kernels) estimate_words += k.name.size() / 8 + 1;
  for (const auto& s : dict.stacks)
    for (const auto& f : s.frames) estimate_words += f.size() / 8 + 2;
  for (const auto& s : dict.strings) estimate_words += s.text.size() / 8 + 1;
  capnp::MallocMessageBuilder builder(static_cast<unsigned>(std::min<size_t>(estimate_words, 1u << 22)));
  auto d = builder.initRoot<schema::ClientMessage>().initDictionary();
  auto kernels = d.initKernels(static_cast<unsigned>(dict.kernels.size()));
  for (size_t i = 0; i < dict.kernels.size(); ++i) {
    const auto& in = dict.kernels[i];
    auto k = kernels[static_cast<unsigned>(i)];
    k.setSignature(in.signature);
    k.setName(text(in.name));
    k.setGridX(in.geometry.grid_x);
    k.setGridY(in.geometry.grid_y);
    k.setGridZ(in.geometry.grid_z);
    k.setBlockX(in.geometry.block_x);
    k.setBlockY(in.geometry.block_y);
    k.setBlockZ(in.geometry.block_z);
  }
  auto stacks = d.initStacks(static_cast<unsigned>(dict.stacks.size()));
  for (size_t i = 0; i < dict.stacks.size(); ++i) {
    const auto& in = dict.stacks[i];
    auto s = stacks[static_cast<unsigned>(i)];
    s.setStackId(in.stack_id);
    auto frames = s.initFrames(static_cast<unsigned>(in.frames.size()));
    for (size_t f = 0; f < in.frames.size(); ++f) frames.set(static_cast<unsigned>(f), text(in.frames[f]));
  }
  auto strings = d.initStrings(static_cast<unsigned>(dict.strings.size()));
  for (size_t i = 0; i < dict.strings.size(); ++i) {
    auto s = strings[static_cast<unsigned>(i)];
    s.setId(dict.strings[i].id);
    s.setText(text(dict.strings[i].text));
  }
  return frameOf(builder);
}

std::string encodeStepBatch(uint64_t first_seq, std::span<const std::string> records) {
  size_t words = 16 + records.size();
  for (const auto& r : records) words += (r.size() + 7) / 8;
  capnp::MallocMessageBuilder builder(static_cast<unsigned>(std::min<size_t>(words, 1u << 24)));
  auto b = builder.initRoot<schema::ClientMessage>().initSteps();
  b.setFirstSeq(first_seq);
  auto list = b.initRecords(static_cast<unsigned>(records.size()));
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    list.set(static_cast<unsigned>(i), capnp::Data::Reader(reinterpret_cast<const kj::byte*>(r.data()), r.size()));
  }
  return frameOf(builder);
}

std::string encodeGoodbye() {
  capnp::MallocMessageBuilder builder(16);
  builder.initRoot<schema::ClientMessage>().setGoodbye();
  return frameOf(builder);
}

std::string encodeWelcome(const Welcome& welcome) {
  capnp::MallocMessageBuilder builder(16);
  auto w = builder.initRoot<schema::ServerMessage>().initWelcome();
  w.setProtocolVersion(welcome.protocol_version);
  w.setSessionId(welcome.session_id);
  w.setMaxFrameBytes(welcome.max_frame_bytes);
  w.setBlockSteps(welcome.block_steps);
  return frameOf(builder);
}

std::string encodeAck(uint64_t up_to) {
  capnp::MallocMessageBuilder builder(16);
  builder.initRoot<schema::ServerMessage>().initAck().setUpTo(up_to);
  return frameOf(builder);
}

std::string encodeControl(const Control& control) {
  capnp::MallocMessageBuilder builder(16);
  auto c = builder.initRoot<schema::ServerMessage>().initControl();
  switch (control.kind) {
    case Control::Kind::kDumpFlightRecorder: {
      auto r = c.initDumpFlightRecorder();
      r.setFromStep(control.from_step);
      r.setToStep(control.to_step);
      break;
    }
    case Control::Kind::kDraining:
      c.setDraining(control.draining_ms);
      break;
  }
  return frameOf(builder);
}

std::string encodeClose(Status::Code code, std::string_view reason) {
  capnp::MallocMessageBuilder builder(32 + reason.size() / 8);
  auto c = builder.initRoot<schema::ServerMessage>().initClose();
  c.setCode(static_cast<uint8_t>(code));
  c.setReason(text(reason.substr(0, 4096)));
  return frameOf(builder);
}

}  // namespace argus::wire
