// StepSender against a scripted fake server: buffering bounds, dictionary-before-records,
// sequence numbers, acks, reconnect with keyframe and re-send, permanent refusals.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "model/step_chain.h"
#include "simulate/synthetic_steps.h"
#include "wire/messages.h"
#include "wire/step_sender.h"
#include "wire/tcp.h"

using namespace argus;
using namespace argus::wire;
using namespace std::chrono_literals;

namespace {

class FakeServer {
 public:
  FakeServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd_, 16) == 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~FakeServer() { ::close(fd_); }
  uint16_t port() const { return port_; }
  FrameConnection accept() {
    int c = ::accept(fd_, nullptr, nullptr);
    REQUIRE(c >= 0);
    return FrameConnection(c);
  }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

ClientMessage readClient(FrameConnection& conn, FrameBody* body) {
  Status s = conn.readFrame(body, 10s);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  ClientMessage m;
  s = decodeClientMessage(*body, FrameLimits{}, &m);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  return m;
}

StepSenderOptions optionsFor(uint16_t port, uint32_t rank) {
  StepSenderOptions o;
  o.port = port;
  o.job = "unit";
  o.topology.rank = rank;
  o.backoff_initial = 5ms;
  o.backoff_max = 50ms;
  o.batch_linger = std::chrono::microseconds(0);
  return o;
}

}  // namespace

TEST_CASE("send() is bounded when nothing acknowledges") {
  FakeServer server;  // listens but never accepts: the handshake never completes
  auto o = optionsFor(server.port(), 0);
  o.max_buffered_records = 5;
  o.send_timeout = 50ms;
  StepSender sender(o);
  simulate::SyntheticSteps gen(0, 4);
  for (int i = 0; i < 5; ++i) REQUIRE(sender.send(gen.next()).isOk());
  auto t0 = std::chrono::steady_clock::now();
  Status s = sender.send(gen.next());
  auto waited = std::chrono::steady_clock::now() - t0;
  CHECK(s.code() == Status::Code::kResourceExhausted);
  CHECK(waited >= 40ms);
  CHECK(waited < 1s);
  CHECK(sender.flush(10ms).code() == Status::Code::kAborted);
  // A record of another rank is refused outright.
  simulate::SyntheticSteps other(1, 4);
  CHECK(sender.send(other.next()).code() == Status::Code::kInvalidArgument);
}

TEST_CASE("dictionary first, seq from 1, chains cut at block_steps, acks, reconnect re-sends unacknowledged records from a keyframe") {
  FakeServer server;
  simulate::SyntheticSteps gen(3, 8);
  std::vector<model::StepRecord> records;
  for (int i = 0; i < 10; ++i) records.push_back(gen.next());

  std::thread script([&] {
    FrameBody body;
    // Session 1: acknowledge the first 4 records only, then drop the connection.
    {
      FrameConnection conn = server.accept();
      ClientMessage hello = readClient(conn, &body);
      REQUIRE(hello.kind == ClientMessage::Kind::kHello);
      CHECK(hello.hello.job == "unit");
      CHECK(hello.hello.topology.rank == 3);
      REQUIRE(conn.write(encodeWelcome({kProtocolVersion, 1, 1 << 20, 4})).isOk());
      ClientMessage dict = readClient(conn, &body);
      REQUIRE(dict.kind == ClientMessage::Kind::kDictionary);
      CHECK(dict.dictionary.kernels.size() == gen.dictionary().kernels.size());
      uint64_t received = 0;
      model::StepDecoder decoder;
      while (received < 10) {
        ClientMessage m = readClient(conn, &body);
        REQUIRE(m.kind == ClientMessage::Kind::kSteps);
        CHECK(m.steps.first_seq == received + 1);
        for (auto r : m.steps.records) {
          model::StepRecord rec;
          REQUIRE(decoder.decode(r, &rec).isOk());
          CHECK(rec.step == records[received].step);
          // Chains restart at the Welcome's block_steps (4).
          CHECK(model::isKeyframe(r) == (received == 0 || rec.step % 4 == 0));
          ++received;
        }
      }
      REQUIRE(conn.write(encodeAck(4)).isOk());
      std::this_thread::sleep_for(50ms);
    }
    // Session 2: everything again from seq 1, dictionary first, a keyframe first.
    {
      FrameConnection conn = server.accept();
      REQUIRE(readClient(conn, &body).kind == ClientMessage::Kind::kHello);
      REQUIRE(conn.write(encodeWelcome({kProtocolVersion, 2, 1 << 20})).isOk());
      REQUIRE(readClient(conn, &body).kind == ClientMessage::Kind::kDictionary);
      uint64_t received = 0;
      model::StepDecoder decoder;  // fresh: the first record must be a keyframe
      while (received < 6) {
        ClientMessage m = readClient(conn, &body);
        REQUIRE(m.kind == ClientMessage::Kind::kSteps);
        CHECK(m.steps.first_seq == received + 1);
        for (auto r : m.steps.records) {
          model::StepRecord rec;
          Status s = decoder.decode(r, &rec);
          REQUIRE_MESSAGE(s.isOk(), s.toString());
          CHECK(rec == records[4 + received]);
          ++received;
        }
      }
      REQUIRE(conn.write(encodeAck(6)).isOk());
      ClientMessage bye = readClient(conn, &body);
      CHECK(bye.kind == ClientMessage::Kind::kGoodbye);
      REQUIRE(conn.write(encodeClose(Status::Code::kOk, "goodbye")).isOk());
    }
  });

  StepSender sender(optionsFor(server.port(), 3));
  sender.addKernels(gen.dictionary().kernels);
  sender.addKernels(gen.dictionary().kernels);  // duplicates are ignored
  for (const auto& r : records) REQUIRE(sender.send(r).isOk());
  Status f = sender.flush(10s);
  CHECK_MESSAGE(f.isOk(), f.toString());
  auto stats = sender.stats();
  CHECK(stats.records_acked == 10);
  CHECK(stats.sessions == 2);
  CHECK(stats.records_resent == 6);
  CHECK(sender.ackedRecords() == 10);
  CHECK(sender.close(5s).isOk());
  script.join();
}

TEST_CASE("a refusal in answer to Hello is permanent and says why") {
  FakeServer server;
  std::thread script([&] {
    FrameConnection conn = server.accept();
    FrameBody body;
    REQUIRE(readClient(conn, &body).kind == ClientMessage::Kind::kHello);
    REQUIRE(conn.write(encodeClose(Status::Code::kPermissionDenied, "wrong auth token for job 'unit'")).isOk());
  });
  StepSender sender(optionsFor(server.port(), 0));
  simulate::SyntheticSteps gen(0, 4);
  (void)sender.send(gen.next());
  Status f = sender.flush(5s);
  CHECK(f.code() == Status::Code::kPermissionDenied);
  CHECK(f.message().find("wrong auth token") != std::string::npos);
  CHECK(sender.send(gen.next()).code() == Status::Code::kPermissionDenied);
  script.join();
}

TEST_CASE("Close{OK} after Control.draining: the sender reconnects") {
  FakeServer server;
  std::thread script([&] {
    FrameBody body;
    {
      FrameConnection conn = server.accept();
      REQUIRE(readClient(conn, &body).kind == ClientMessage::Kind::kHello);
      REQUIRE(conn.write(encodeWelcome({kProtocolVersion, 1, 1 << 20})).isOk());
      Control c;
      c.kind = Control::Kind::kDraining;
      c.draining_ms = 20;
      REQUIRE(conn.write(encodeControl(c)).isOk());
      REQUIRE(conn.write(encodeClose(Status::Code::kOk, "server shutting down")).isOk());
    }
    FrameConnection conn = server.accept();
    REQUIRE(readClient(conn, &body).kind == ClientMessage::Kind::kHello);
    REQUIRE(conn.write(encodeWelcome({kProtocolVersion, 2, 1 << 20})).isOk());
    ClientMessage m = readClient(conn, &body);
    REQUIRE(m.kind == ClientMessage::Kind::kSteps);
    REQUIRE(conn.write(encodeAck(m.steps.first_seq + m.steps.records.size() - 1)).isOk());
    std::this_thread::sleep_for(100ms);
  });
  StepSender sender(optionsFor(server.port(), 0));
  std::this_thread::sleep_for(100ms);
  simulate::SyntheticSteps gen(0, 4);
  REQUIRE(sender.send(gen.next()).isOk());
  CHECK(sender.flush(5s).isOk());
  CHECK(sender.stats().sessions == 2);
  script.join();
}

TEST_CASE("dictionary text over argusd's limit is cut and marked, not sent whole to be refused") {
  FakeServer server;
  StepSender sender(optionsFor(server.port(), 1));
  std::string long_name = std::string(kMaxDictTextBytes - 3, 'a') + "\xc3\xa9\xc3\xa9";  // UTF-8 across the cut
  sender.addKernels(std::vector<model::KernelDictEntry>{{1, long_name, {}}});
  sender.addStacks(std::vector<model::StackDictEntry>{{2, std::vector<std::string>(kMaxStackFrames + 5, "frame")}});
  sender.addStrings(std::vector<model::StringDictEntry>{{3, "short"}});
  std::thread script([&] {
    FrameBody body;
    FrameConnection conn = server.accept();
    REQUIRE(readClient(conn, &body).kind == ClientMessage::Kind::kHello);
    REQUIRE(conn.write(encodeWelcome({kProtocolVersion, 1, 1 << 20})).isOk());
    ClientMessage dict = readClient(conn, &body);  // decodes: nothing over the limits
    REQUIRE(dict.kind == ClientMessage::Kind::kDictionary);
    REQUIRE(dict.dictionary.kernels.size() == 1);
    const std::string& name = dict.dictionary.kernels[0].name;
    CHECK(name.size() <= kMaxDictTextBytes);
    CHECK(name.ends_with("...[cut]"));
    CHECK(name.find('\xc3') == std::string::npos);  // no half character left before the mark
    REQUIRE(dict.dictionary.stacks.size() == 1);
    CHECK(dict.dictionary.stacks[0].frames.size() == kMaxStackFrames);
    CHECK(dict.dictionary.strings.at(0).text == "short");
  });
  script.join();
}
