// Hostile input against the real argusd: every kind of bad input gets a Close with a clear
// reason and closes only that session, while a concurrent good session keeps streaming,
// its data stays exactly as sent, and argusd keeps serving.
#include <doctest/doctest.h>

#include <sys/socket.h>

#include <atomic>
#include <fstream>
#include <random>
#include <thread>

#include "tests/integration/ingest_test_util.h"

using namespace argus;
using namespace argus::testing;

namespace {

std::string header(uint32_t n) {
  std::string h(4, '\0');
  wire::putFrameHeader(n, reinterpret_cast<uint8_t*>(h.data()));
  return h;
}

std::string httpGet(uint16_t port, const std::string& path) {
  auto c = wire::FrameConnection::connect("127.0.0.1", port, 5s);
  if (!c.isOk()) return "";
  std::string req = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (!c.value().write(req).isOk()) return "";
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::recv(c.value().fd(), buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}


}  // namespace

TEST_CASE("bad input closes only the offending session, with a reason") {
  std::string auth_path;
  ArgusdProcess argusd;
  auth_path = argusd.workDir() + "/auth";
  {
    std::ofstream auth(auth_path);
    auth << "# test tokens\n"
         << "good     good-token\n"
         << "hostile  hostile-token\n";
  }
  argusd.setArgs({"--auth", auth_path, "--max-frame-bytes", "65536", "--hello-timeout-ms", "300"});
  argusd.setHttp(true);
  REQUIRE_MESSAGE(argusd.start().isOk(), argusd.stderrTail());
  uint16_t port = argusd.ingestPort();

  // The good session streams throughout.
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> good_sent{0};
  std::vector<int64_t> good_iter;
  Status good_status;
  std::thread good([&] {
    auto options = senderOptions(port, "good", 0);
    options.auth_token = "good-token";
    wire::StepSender sender(options);
    SyntheticSteps gen(0, 16);
    addDictionary(sender, gen);
    while (!stop.load()) {
      model::StepRecord rec = gen.next();
      good_iter.push_back(rec.iter_ns);
      good_status = sender.send(std::move(rec));
      if (!good_status.isOk()) return;
      ++good_sent;
      std::this_thread::sleep_for(1ms);
    }
    good_status = sender.close(20s);
    if (sender.ackedRecords() != good_sent.load()) good_status = Status::aborted("not all good records acked");
  });

  const std::string tok = "hostile-token";

  {
    INFO("truncated frame: the header promises more than arrives before EOF");
    RawClient c;
    welcomed(c, port, "hostile", 1, tok);
    std::string frame = wire::encodeStepBatch(1, std::vector<std::string>{std::string(500, 'x')});
    REQUIRE(c.conn.write(frame.substr(0, 100)).isOk());
    c.conn.shutdownWrite();
    wire::CloseMsg close = c.waitClose();
    CHECK(close.code == Status::Code::kCorruption);
    CHECK_MESSAGE(close.reason.find("truncated frame") != std::string::npos, close.reason);
  }
  {
    INFO("truncated message: a whole frame whose Cap'n Proto message is cut");
    RawClient c;
    welcomed(c, port, "hostile", 2, tok);
    std::string frame = wire::encodeStepBatch(1, std::vector<std::string>{std::string(500, 'x')});
    std::string body = frame.substr(4, 256);
    REQUIRE(c.conn.write(header(static_cast<uint32_t>(body.size())) + body).isOk());
    wire::CloseMsg close = c.waitClose();
    CHECK(close.code == Status::Code::kCorruption);
    CHECK_MESSAGE(close.reason.find("bad message") != std::string::npos, close.reason);
  }
  {
    INFO("oversized frame: refused from the length prefix alone");
    RawClient c;
    welcomed(c, port, "hostile", 3, tok);
    REQUIRE(c.conn.write(header(1u << 30)).isOk());
    wire::CloseMsg close = c.waitClose();
    CHECK(close.code == Status::Code::kInvalidArgument);
    CHECK_MESSAGE(close.reason.find("exceeds the limit of 65536") != std::string::npos, close.reason);
  }
  {
    INFO("random bytes instead of a Hello");
    std::mt19937_64 rng(99);
    for (int i = 0; i < 20; ++i) {
      RawClient c;
      REQUIRE(c.connect(port).isOk());
      std::string junk(64 + rng() % 4000, '\0');
      for (auto& ch : junk) ch = static_cast<char>(rng());
      if (i % 2 == 0) {  // a plausible length so the body is parsed
        std::string h = header(static_cast<uint32_t>((junk.size() - 4) / 8 * 8));
        junk.replace(0, 4, h);
      }
      (void)c.conn.write(junk);
      c.conn.shutdownWrite();
      wire::CloseMsg close = c.waitClose();
      CHECK(close.code != Status::Code::kOk);
      CHECK_MESSAGE((close.reason.find("bad frame") != std::string::npos || close.reason.find("bad message") != std::string::npos ||
                     close.reason.find("truncated") != std::string::npos || close.reason.find("first message") != std::string::npos ||
                     close.reason.find("bad Hello") != std::string::npos),
                    close.reason);
    }
  }
  {
    INFO("wrong protocol version");
    RawClient c;
    REQUIRE(c.connect(port).isOk());
    wire::Hello h = makeHello("hostile", 4, tok);
    h.protocol_version = 99;
    wire::ServerMessage reply;
    REQUIRE(c.hello(h, &reply).isOk());
    REQUIRE(reply.kind == wire::ServerMessage::Kind::kClose);
    CHECK(reply.close.code == Status::Code::kVersionMismatch);
    CHECK_MESSAGE(reply.close.reason.find("protocol version 99 is not supported") != std::string::npos, reply.close.reason);
  }
  {
    INFO("wrong token");
    RawClient c;
    REQUIRE(c.connect(port).isOk());
    wire::ServerMessage reply;
    REQUIRE(c.hello(makeHello("hostile", 5, "guess"), &reply).isOk());
    REQUIRE(reply.kind == wire::ServerMessage::Kind::kClose);
    CHECK(reply.close.code == Status::Code::kPermissionDenied);
    CHECK_MESSAGE(reply.close.reason.find("wrong auth token") != std::string::npos, reply.close.reason);
  }
  {
    INFO("unknown job");
    RawClient c;
    REQUIRE(c.connect(port).isOk());
    wire::ServerMessage reply;
    REQUIRE(c.hello(makeHello("not-listed", 6, tok), &reply).isOk());
    REQUIRE(reply.kind == wire::ServerMessage::Kind::kClose);
    CHECK(reply.close.code == Status::Code::kNotFound);
    CHECK_MESSAGE(reply.close.reason.find("unknown job 'not-listed'") != std::string::npos, reply.close.reason);
  }
  {
    INFO("StepSender surfaces a refusal as a permanent error");
    auto options = senderOptions(port, "hostile", 7);
    options.auth_token = "guess";
    wire::StepSender sender(options);
    Status s = sender.flush(100ms);
    for (int i = 0; i < 100 && sender.status().isOk(); ++i) std::this_thread::sleep_for(20ms);
    CHECK(sender.status().code() == Status::Code::kPermissionDenied);
    CHECK(sender.send(recordAt(7, 1)).code() == Status::Code::kPermissionDenied);
  }
  {
    INFO("out-of-order step inside one batch: nothing of the batch is stored");
    RawClient c;
    welcomed(c, port, "hostile", 8, tok);
    REQUIRE(c.sendRecords({recordAt(8, 5), recordAt(8, 6), recordAt(8, 4)}).isOk());
    wire::CloseMsg close = c.waitClose();
    CHECK(close.code == Status::Code::kInvalidArgument);
    CHECK_MESSAGE(close.reason.find("out-of-order step 4 after step 6") != std::string::npos, close.reason);
  }
  {
    INFO("duplicate step across batches: the first batch is stored and acknowledged");
    RawClient c;
    welcomed(c, port, "hostile", 9, tok);
    REQUIRE(c.sendRecords({recordAt(9, 5), recordAt(9, 6)}).isOk());
    REQUIRE(c.waitAck(2).isOk());
    REQUIRE(c.sendRecords({recordAt(9, 6)}).isOk());
    wire::CloseMsg close = c.waitClose();
    CHECK(close.code == Status::Code::kInvalidArgument);
    CHECK_MESSAGE(close.reason.find("duplicate step 6") != std::string::npos, close.reason);
  }
  {
    INFO("a delta record across a block boundary (protocol 2 restarts chains at blocks)");
    RawClient c;
    welcomed(c, port, "hostile", 14, tok);
    c.encoder.setBlockSteps(0);  // a client that ignores Welcome.block_steps
    REQUIRE(c.sendRecords({recordAt(14, 254), recordAt(14, 255)}).isOk());
    REQUIRE(c.waitAck(2).isOk());
    REQUIRE(c.sendRecords({recordAt(14, 256)}).isOk());
    wire::CloseMsg close = c.waitClose();
    CHECK(close.code == Status::Code::kInvalidArgument);
    CHECK_MESSAGE(close.reason.find("record seq 3 (step 256, attempt 0) is a delta across a block boundary") != std::string::npos, close.reason);
  }
  {
    INFO("sequence gap");
    RawClient c;
    welcomed(c, port, "hostile", 10, tok);
    c.next_seq = 5;
    REQUIRE(c.sendRecords({recordAt(10, 1)}).isOk());
    wire::CloseMsg close = c.waitClose();
    CHECK(close.code == Status::Code::kInvalidArgument);
    CHECK_MESSAGE(close.reason.find("starts at seq 5, expected 1") != std::string::npos, close.reason);
  }
  {
    INFO("record for another rank");
    RawClient c;
    welcomed(c, port, "hostile", 11, tok);
    REQUIRE(c.sendRecords({recordAt(12, 1)}).isOk());
    wire::CloseMsg close = c.waitClose();
    CHECK(close.code == Status::Code::kInvalidArgument);
    CHECK_MESSAGE(close.reason.find("is for rank 12") != std::string::npos, close.reason);
  }
  {
    INFO("garbage record bytes");
    RawClient c;
    welcomed(c, port, "hostile", 13, tok);
    REQUIRE(c.conn.write(wire::encodeStepBatch(1, std::vector<std::string>{std::string("\xff\xfe garbage", 10)})).isOk());
    wire::CloseMsg close = c.waitClose();
    CHECK(close.code == Status::Code::kCorruption);
    CHECK_MESSAGE(close.reason.find("record seq 1") != std::string::npos, close.reason);
  }
  {
    INFO("silent connection (slowloris): closed after the Hello timeout");
    RawClient c;
    REQUIRE(c.connect(port).isOk());
    REQUIRE(c.conn.write(std::string("\x40\x00", 2)).isOk());  // half a header, then nothing
    wire::CloseMsg close = c.waitClose();
    CHECK(close.code == Status::Code::kAborted);
    CHECK_MESSAGE(close.reason.find("no Hello within 300 ms") != std::string::npos, close.reason);
  }
  {
    INFO("a message before Hello");
    RawClient c;
    REQUIRE(c.connect(port).isOk());
    REQUIRE(c.conn.write(wire::encodeStepBatch(1, std::vector<std::string>{"x"})).isOk());
    wire::CloseMsg close = c.waitClose();
    CHECK_MESSAGE(close.reason.find("first message must be Hello, got StepBatch") != std::string::npos, close.reason);
  }

  // argusd still serves: a new session works, and /metrics counts the refusals.
  {
    RawClient c;
    welcomed(c, port, "hostile", 20, tok);
    REQUIRE(c.sendRecords({recordAt(20, 1), recordAt(20, 2)}).isOk());
    REQUIRE(c.waitAck(2).isOk());
  }
  std::string metrics = httpGet(argusd.httpPort(), "/metrics");
  CHECK(metrics.find("argus_ingest_rejected_sessions_total{reason=\"wrong_token\"} 2") != std::string::npos);
  CHECK(metrics.find("argus_ingest_rejected_sessions_total{reason=\"step_order\"} 2") != std::string::npos);
  CHECK(metrics.find("argus_ingest_rejected_sessions_total{reason=\"frame_too_large\"} 1") != std::string::npos);
  CHECK(metrics.find("argus_ingest_rejected_sessions_total{reason=\"timeout\"} 1") != std::string::npos);

  while (good_sent.load() < 200 && good_status.isOk()) std::this_thread::sleep_for(5ms);
  stop = true;
  good.join();
  CHECK_MESSAGE(good_status.isOk(), good_status.toString());
  CHECK(good_sent.load() > 0);
  REQUIRE(argusd.stop() == 0);

  StoredRows rows;
  REQUIRE(scanSteps(argusd.dataDir(), "good", &rows).isOk());
  CHECK(rows.size() == good_sent.load());
  for (uint64_t step = 0; step < good_sent.load(); ++step) {
    auto it = rows.find({0, step});
    REQUIRE(it != rows.end());
    CHECK(it->second.size() == 1);
    CHECK(it->second[0].iter_ns == good_iter[step]);
  }
  StoredRows hostile;
  REQUIRE(scanSteps(argusd.dataDir(), "hostile", &hostile).isOk());
  // Only what was acknowledged: rank 9 steps 5 and 6, rank 14 steps 254 and 255, rank 20
  // steps 1 and 2.
  std::vector<std::pair<uint32_t, uint64_t>> keys;
  for (const auto& [k, v] : hostile) keys.push_back(k);
  CHECK(keys == std::vector<std::pair<uint32_t, uint64_t>>{{9, 5}, {9, 6}, {14, 254}, {14, 255}, {20, 1}, {20, 2}});
  MESSAGE("good session records while under attack: " << good_sent.load());
}
