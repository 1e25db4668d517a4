// StepSender with a spool (docs/wire/spool.md) against a fake argusd that acknowledges
// every batch and, like argusd, refuses a session whose steps do not increase: records
// beyond a tiny memory buffer go to the spool while nothing listens, memory stays under the
// bound, and once the server is up every record arrives, in order; a spool left behind by
// a sender that closed while the server was away is sent by the next sender of that rank.
#include <arpa/inet.h>
#include <dirent.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "model/step_codec.h"
#include "simulate/synthetic_steps.h"
#include "wire/messages.h"
#include "wire/step_sender.h"
#include "wire/tcp.h"
#include "temp_dir.h"

using namespace argus;
using namespace argus::wire;
using namespace std::chrono_literals;

namespace {

uint16_t unusedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Acknowledges every StepBatch at once; records what arrived per session.
class AckingServer {
 public:
  explicit AckingServer(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd_, 16) == 0);
    thread_ = std::thread([this] { run(); });
  }
  ~AckingServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  // Steps received, per session, in arrival order.
  std::vector<std::vector<uint64_t>> sessions() {
    std::lock_guard lock(mu_);
    return sessions_;
  }
  std::string error() {
    std::lock_guard lock(mu_);
    return error_;
  }

 private:
  void run() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      int c = ::accept(fd_, nullptr, nullptr);
      if (c >= 0) serve(FrameConnection(c));
    }
  }
  void fail(const std::string& why) {
    std::lock_guard lock(mu_);
    if (error_.empty()) error_ = why;
  }
  void serve(FrameConnection conn) {
    FrameBody body;
    ClientMessage m;
    if (!conn.readFrame(&body, 5s).isOk() || !decodeClientMessage(body, FrameLimits{}, &m).isOk() || m.kind != ClientMessage::Kind::kHello) {
      return fail("no Hello");
    }
    if (!conn.write(encodeWelcome({kProtocolVersion, 1, 1 << 20, 64})).isOk()) return;
    {
      std::lock_guard lock(mu_);
      sessions_.emplace_back();
    }
    model::StepDecoder decoder;
    uint64_t seq = 0;
    bool have_last = false;
    uint64_t last = 0;
    while (!stop_) {
      Status s = conn.readFrame(&body, 10s);  // a timeout mid-frame would lose our place: be generous
      if (!s.isOk()) return;  // the sender went away
      if (!decodeClientMessage(body, FrameLimits{}, &m).isOk()) return fail("undecodable frame");
      if (m.kind == ClientMessage::Kind::kGoodbye) {
        (void)conn.write(encodeClose(Status::Code::kOk, "goodbye"));
        return;
      }
      if (m.kind != ClientMessage::Kind::kSteps) continue;
      if (m.steps.first_seq != seq + 1) return fail("seq gap");
      for (auto r : m.steps.records) {
        model::StepRecord rec;
        if (!decoder.decode(r, &rec).isOk()) return fail("a record does not decode");
        if (have_last && rec.step <= last) {  // argusd: "out-of-order or duplicate step"
          (void)conn.write(encodeClose(Status::Code::kInvalidArgument, "out-of-order step"));
          return fail("out-of-order step " + std::to_string(rec.step) + " after " + std::to_string(last));
        }
        have_last = true;
        last = rec.step;
        std::lock_guard lock(mu_);
        sessions_.back().push_back(rec.step);
      }
      seq += m.steps.records.size();
      if (!conn.write(encodeAck(seq)).isOk()) return;
    }
  }

  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<std::vector<uint64_t>> sessions_;
  std::string error_;
  std::thread thread_;
};

// Each test's own directory, named for this file.
struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir("argus-sender-spool") {}
};

StepSenderOptions spoolingOptions(uint16_t port, const std::string& dir) {
  StepSenderOptions o;
  o.port = port;
  o.job = "spooljob";
  o.topology.rank = 1;
  o.backoff_initial = 5ms;
  o.backoff_max = 20ms;
  o.connect_timeout = 200ms;
  o.batch_linger = std::chrono::microseconds(0);
  o.max_buffered_records = 4;  // a few records in memory; the rest must go to the spool
  o.spool_dir = dir;
  return o;
}

}  // namespace

TEST_CASE("argusd away: records beyond a 4-record buffer go to the spool, memory stays bounded, all arrive in order") {
  TempDir dir;
  uint16_t port = unusedPort();
  auto o = spoolingOptions(port, dir.path);
  std::vector<std::string> log;
  std::mutex log_mu;
  o.log = [&](std::string_view l) {
    std::lock_guard lock(log_mu);
    log.emplace_back(l);
  };
  StepSender sender(o);
  simulate::SyntheticSteps gen(1, 8);
  sender.addKernels(gen.dictionary().kernels);
  constexpr int kRecords = 300;
  size_t one_record_bytes = 0;
  for (int i = 0; i < kRecords; ++i) {
    model::StepRecord r = gen.next();
    one_record_bytes = std::max(one_record_bytes, model::memoryBytes(r));
    Status s = sender.send(std::move(r));
    REQUIRE_MESSAGE(s.isOk(), s.toString());  // never refused: the spool takes what memory cannot
  }
  auto st = sender.stats();
  CHECK(st.buffered_records <= 4);
  CHECK(st.peak_buffered_records == 4);                   // the memory bound held throughout
  CHECK(st.peak_buffered_bytes <= 4 * one_record_bytes);
  CHECK(st.buffered_bytes <= st.peak_buffered_bytes);
  CHECK(st.spooled_records >= kRecords - 4);
  CHECK(st.spool_records == st.spooled_records);
  CHECK(st.spool_bytes > 0);
  CHECK(dir.files().size() == 1);
  CHECK(st.records_acked == 0);

  AckingServer server(port);  // argusd comes up
  Status f = sender.flush(20s);
  REQUIRE_MESSAGE(f.isOk(), f.toString());
  REQUIRE(server.error().empty());
  std::vector<uint64_t> all;
  for (const auto& session : server.sessions()) all.insert(all.end(), session.begin(), session.end());
  // Every step once (sessions that broke before their acks could re-send some, not here).
  REQUIRE(all.size() == kRecords);
  for (int i = 0; i < kRecords; ++i) CHECK(all[i] == static_cast<uint64_t>(i));
  st = sender.stats();
  CHECK(st.records_acked == kRecords);
  CHECK(st.spool_replayed == st.spooled_records);
  CHECK(st.spool_records == 0);
  CHECK(st.spool_bytes == 0);
  CHECK(dir.files().empty());  // the empty spool is removed
  CHECK(st.peak_buffered_bytes <= 4 * one_record_bytes);

  // The spool is done: new records use memory again.
  REQUIRE(sender.send(gen.next()).isOk());
  REQUIRE(sender.flush(5s).isOk());
  CHECK(sender.stats().spooled_records == st.spooled_records);
  CHECK(sender.close(5s).isOk());
  std::lock_guard lock(log_mu);
  CHECK(log.empty());  // nothing went wrong
}

TEST_CASE("close() with argusd away leaves a spool; the next sender of the rank sends it first, in a session of its own") {
  TempDir dir;
  uint16_t port = unusedPort();
  simulate::SyntheticSteps gen(1, 8);
  {
    auto o = spoolingOptions(port, dir.path);
    o.max_buffered_records = 16;
    StepSender first(o);
    first.addKernels(gen.dictionary().kernels);
    for (int i = 0; i < 40; ++i) REQUIRE(first.send(gen.next()).isOk());
    CHECK(first.close(50ms).code() == Status::Code::kAborted);  // nobody to acknowledge
    auto st = first.stats();
    CHECK(st.spooled_records == 40);  // 24 beyond the buffer, then the 16 in memory at close
    CHECK(st.spool_records == 40);
  }
  REQUIRE(dir.files().size() == 1);  // left for the next run

  AckingServer server(port);
  auto o = spoolingOptions(port, dir.path);
  std::mutex log_mu;
  std::string log;
  o.log = [&](std::string_view l) {
    std::lock_guard lock(log_mu);
    log.append(l).append("\n");
  };
  StepSender second(o);  // no dictionary of its own: the spool's must be registered
  simulate::SyntheticSteps restart(1, 8);  // the job restarted: steps from 0 again
  for (int i = 0; i < 10; ++i) REQUIRE(second.send(restart.next()).isOk());
  Status f = second.flush(20s);
  REQUIRE_MESSAGE(f.isOk(), f.toString());
  REQUIRE_MESSAGE(server.error().empty(), server.error());
  auto st = second.stats();
  CHECK(st.spool_adopted == 40);
  CHECK(st.records_acked == 50);
  CHECK(st.session_cuts >= 1);  // steps 0..9 cannot follow step 39 in one session
  std::vector<uint64_t> all;
  for (const auto& session : server.sessions()) {
    CHECK(std::is_sorted(session.begin(), session.end()));
    all.insert(all.end(), session.begin(), session.end());
  }
  std::sort(all.begin(), all.end());
  std::vector<uint64_t> want;
  for (uint64_t s = 0; s < 40; ++s) want.push_back(s);
  for (uint64_t s = 0; s < 10; ++s) want.push_back(s);
  std::sort(want.begin(), want.end());
  CHECK(all == want);
  CHECK(dir.files().empty());
  CHECK(second.close(5s).isOk());
  std::lock_guard lock(log_mu);
  CHECK(log.find("of an earlier run: 40 steps to send") != std::string::npos);
}
