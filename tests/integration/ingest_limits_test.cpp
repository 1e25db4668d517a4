// Resource limits of the real argusd against hostile clients: decoded-size amplification,
// frame headers that announce more than arrives, steps beyond int64, and too many sessions.
// Each gets a Close with a clear reason, argusd's memory stays bounded, and argusd keeps
// serving a good session.
#include <doctest/doctest.h>

#include <limits>
#include <thread>

#include "cli/http_client.h"
#include "tests/integration/ingest_test_util.h"

using namespace argus;
using namespace argus::testing;

namespace {

constexpr long kRssLimitKb = 300 * 1024;

std::string header(uint32_t n) {
  std::string h(4, '\0');
  wire::putFrameHeader(n, reinterpret_cast<uint8_t*>(h.data()));
  return h;
}


// A keyframe with `kernels` kernels whose histograms span every bucket, then `deltas` delta
// records saying "same kernels, same histograms" (a few hundred bytes each).
std::vector<std::string> amplifyingRecords(int kernels, int deltas, size_t* buckets_per_kernel = nullptr) {
  model::StepRecord r;
  r.rank = 0;
  r.start_ns = 1;
  r.end_ns = 2;
  r.iter_ns = 1;
  for (int k = 0; k < kernels; ++k) {
    model::KernelStat s;
    s.signature = 1000 + static_cast<uint64_t>(k);
    s.phase = model::Phase::kForward;
    for (int64_t d = 1; d > 0 && d < (int64_t{1} << 62); d = d + d / 64 + 1) s.hist.add(d, 1);
    s.count = static_cast<uint32_t>(s.hist.count());
    s.total_ns = 12345;
    r.kernels.push_back(std::move(s));
  }
  r.canonicalize();
  if (buckets_per_kernel) *buckets_per_kernel = r.kernels.empty() ? 0 : r.kernels[0].hist.buckets().size();
  model::StepEncoder enc;
  std::vector<std::string> recs;
  for (int i = 0; i <= deltas; ++i) {
    r.step = 1 + static_cast<uint64_t>(i);
    recs.emplace_back();
    enc.encode(r, &recs.back());
  }
  return recs;
}

size_t bucketsPerWideKernel() {
  size_t b = 0;
  amplifyingRecords(1, 0, &b);
  return b;
}

// A good session still gets its records acknowledged.
void goodSessionWorks(uint16_t port, const std::string& job) {
  RawClient c;
  welcomed(c, port, job, 0);
  REQUIRE(c.sendRecords({recordAt(0, 1), recordAt(0, 2)}).isOk());
  wire::CloseMsg close;
  Status s = c.waitAck(2, &close);
  CHECK_MESSAGE(s.isOk(), s.toString());
}

}  // namespace

TEST_CASE("amplifying delta records: the session is closed, argusd's memory stays bounded") {
  ArgusdProcess argusd;
  REQUIRE_MESSAGE(argusd.start().isOk(), argusd.stderrTail());
  uint16_t port = argusd.ingestPort();

  {
    INFO("one 4 MB frame of 'same as previous' records that would decode to ~30 GB");
    RawClient c;
    welcomed(c, port, "amp", 0);
    std::string frame = wire::encodeStepBatch(1, amplifyingRecords(200, 9000));
    REQUIRE(frame.size() < (16u << 20));
    REQUIRE(c.conn.write(frame, 30s).isOk());
    wire::CloseMsg close = c.waitClose();
    CHECK(close.code == Status::Code::kCorruption);
    CHECK_MESSAGE(close.reason.find("decoded size over budget") != std::string::npos, close.reason);
    CHECK_MESSAGE(close.reason.find("record seq 2") != std::string::npos, close.reason);
    long rss = rssKib(argusd.pid());
    CHECK_MESSAGE(rss < kRssLimitKb, "argusd VmRSS " << rss << " KiB");
  }
  {
    INFO("records each just under the per-record budget: the batch's decoded size closes the session");
    size_t per_kernel = bucketsPerWideKernel() + 1;
    int kernels = static_cast<int>(60000 / per_kernel);
    RawClient c;
    welcomed(c, port, "amp2", 0);
    std::string frame = wire::encodeStepBatch(1, amplifyingRecords(kernels, 4000));
    REQUIRE(c.conn.write(frame, 30s).isOk());
    wire::CloseMsg close = c.waitClose();
    CHECK(close.code == Status::Code::kResourceExhausted);
    CHECK_MESSAGE(close.reason.find("decodes to more than") != std::string::npos, close.reason);
    long rss = rssKib(argusd.pid());
    CHECK_MESSAGE(rss < kRssLimitKb, "argusd VmRSS " << rss << " KiB");
  }
  goodSessionWorks(port, "good");
  CHECK(argusd.stop() == 0);
}

TEST_CASE("frame headers that announce 16 MiB: refused before Hello, timed out after it, memory bounded") {
  ArgusdProcess argusd;
  argusd.setArgs({"--frame-timeout-ms", "1000"});
  REQUIRE_MESSAGE(argusd.start().isOk(), argusd.stderrTail());
  uint16_t port = argusd.ingestPort();
  long rss0 = rssKib(argusd.pid());

  {
    INFO("60 connections send only a 16 MiB frame header before Hello");
    std::vector<RawClient> clients(60);
    for (auto& c : clients) {
      REQUIRE(c.connect(port).isOk());
      REQUIRE(c.conn.write(header(16u << 20)).isOk());
    }
    long rss = rssKib(argusd.pid());
    CHECK_MESSAGE(rss < kRssLimitKb, "argusd VmRSS " << rss << " KiB");
    for (auto& c : clients) {
      wire::CloseMsg close = c.waitClose();
      CHECK(close.code == Status::Code::kInvalidArgument);
      CHECK_MESSAGE(close.reason.find("before Hello") != std::string::npos, close.reason);
    }
  }
  {
    INFO("60 sessions send Hello, then a 16 MiB header and 1000 bytes, then stall");
    std::vector<RawClient> clients(60);
    for (auto& c : clients) {
      welcomed(c, port, "slow", 0);
      REQUIRE(c.conn.write(header(16u << 20) + std::string(1000, '\0')).isOk());
    }
    std::this_thread::sleep_for(200ms);
    long rss = rssKib(argusd.pid());
    // Buffers grow with what arrived, not what was announced (60 x 16 MiB would be ~1 GB).
    CHECK_MESSAGE(rss < rss0 + 100 * 1024, "argusd VmRSS " << rss << " KiB, " << rss0 << " KiB at start");
    for (auto& c : clients) {
      wire::CloseMsg close = c.waitClose();
      CHECK(close.code == Status::Code::kAborted);
      CHECK_MESSAGE(close.reason.find("frame not completed within 1000 ms") != std::string::npos, close.reason);
    }
  }
  goodSessionWorks(port, "good");
  CHECK(argusd.stop() == 0);
}

TEST_CASE("a step above 2^63-1 is refused at ingest, naming the step") {
  ArgusdProcess argusd;
  REQUIRE_MESSAGE(argusd.start().isOk(), argusd.stderrTail());
  uint16_t port = argusd.ingestPort();
  RawClient c;
  welcomed(c, port, "bigstep", 0);
  model::StepRecord r = recordAt(0, 1);
  r.step = uint64_t{1} << 63;
  REQUIRE(c.sendRecords({r}).isOk());
  wire::CloseMsg close = c.waitClose();
  CHECK(close.code == Status::Code::kInvalidArgument);
  CHECK_MESSAGE(close.reason.find("step 9223372036854775808") != std::string::npos, close.reason);
  goodSessionWorks(port, "bigstep");  // nothing of it was stored or half-stored
  CHECK(argusd.stop() == 0);
}

TEST_CASE("--max-sessions: a connection over the limit gets 'too many sessions'") {
  ArgusdProcess argusd;
  argusd.setArgs({"--max-sessions", "10"});
  REQUIRE_MESSAGE(argusd.start().isOk(), argusd.stderrTail());
  uint16_t port = argusd.ingestPort();
  {
    std::vector<RawClient> clients(10);
    for (size_t i = 0; i < clients.size(); ++i) welcomed(clients[i], port, "many", static_cast<uint32_t>(i));
    RawClient extra;
    REQUIRE(extra.connect(port).isOk());
    wire::CloseMsg close = extra.waitClose();
    CHECK(close.code == Status::Code::kResourceExhausted);
    CHECK_MESSAGE(close.reason.find("too many sessions") != std::string::npos, close.reason);
    for (auto& c : clients) REQUIRE(c.conn.write(wire::encodeGoodbye()).isOk());
    for (auto& c : clients) CHECK(c.waitClose().code == Status::Code::kOk);
  }
  // Once those closed, there is room again.
  bool served = false;
  for (int i = 0; i < 50 && !served; ++i) {
    RawClient c;
    REQUIRE(c.connect(port).isOk());
    wire::ServerMessage reply;
    if (c.hello(makeHello("many", 0), &reply).isOk() && reply.kind == wire::ServerMessage::Kind::kWelcome) served = true;
    if (!served) std::this_thread::sleep_for(50ms);
  }
  CHECK(served);
  CHECK(argusd.stop() == 0);
}

TEST_CASE("--max-head-bytes: a full head pauses reading while complete blocks are sealed; never stuck, nothing lost") {
  // 16-step blocks: ranks complete blocks all the time, the sealer makes room. 512-step
  // blocks: everything over the limit sits in open blocks, which only more records complete.
  for (const char* block_steps : {"16", "512"}) {
    CAPTURE(block_steps);
    ArgusdProcess argusd;
    // Only seals the full head forces (the periodic one is 10 minutes away).
    argusd.setArgs({"--max-head-bytes", "30000", "--block-steps", block_steps, "--seal-interval-ms", "600000"});
    argusd.setHttp(true);
    REQUIRE_MESSAGE(argusd.start().isOk(), argusd.stderrTail());
    constexpr int kRanks = 2, kSteps = 300;
    std::map<std::pair<uint32_t, uint64_t>, int64_t> sent;
    std::vector<std::unique_ptr<wire::StepSender>> senders;
    for (uint32_t r = 0; r < kRanks; ++r) {
      SyntheticSteps gen(r, 64);
      senders.push_back(std::make_unique<wire::StepSender>(senderOptions(argusd.ingestPort(), "full-head", r)));
      addDictionary(*senders.back(), gen);
      for (int s = 0; s < kSteps; ++s) {
        model::StepRecord rec = gen.next();
        sent[{r, rec.step}] = rec.iter_ns;
        REQUIRE(senders.back()->send(std::move(rec)).isOk());
      }
    }
    for (auto& s : senders) {
      Status st = s->flush(60s);
      REQUIRE_MESSAGE(st.isOk(), st.toString(), argusd.stderrTail());
    }
    CHECK(metricSample(argusd.httpPort(), "argus_ingest_head_full_pauses_total") > 0);
    CHECK(metricSample(argusd.httpPort(), "argus_ingest_forced_seals_total") > 0);
    for (auto& s : senders) s->close();
    REQUIRE_MESSAGE(argusd.stop() == 0, argusd.stderrTail());
    checkStoredOnce(argusd.dataDir(), "full-head", sent);
  }
}

TEST_CASE("a StepBatch over --max-batch-decoded-bytes: StepSender halves its batches until they fit") {
  ArgusdProcess argusd;
  argusd.setArgs({"--max-batch-decoded-bytes", "65536"});
  REQUIRE_MESSAGE(argusd.start().isOk(), argusd.stderrTail());
  SyntheticSteps gen(0, 64);  // ~10 KB decoded per record: 8 fit, 128 do not
  wire::StepSenderOptions o = senderOptions(argusd.ingestPort(), "halving", 0);
  o.max_batch_records = 128;
  o.batch_linger = std::chrono::seconds(5);  // full batches of 128 however slowly records come (sanitizers)
  o.backoff_initial = 5ms;
  wire::StepSender sender(o);
  addDictionary(sender, gen);
  std::map<std::pair<uint32_t, uint64_t>, int64_t> sent;
  for (int s = 0; s < 200; ++s) {
    model::StepRecord rec = gen.next();
    sent[{0, rec.step}] = rec.iter_ns;
    REQUIRE(sender.send(std::move(rec)).isOk());
  }
  Status st = sender.flush(60s);
  REQUIRE_MESSAGE(st.isOk(), st.toString(), argusd.stderrTail());
  CHECK(sender.stats().sessions > 1);  // refused, then smaller
  REQUIRE(sender.close().isOk());
  REQUIRE(argusd.stop() == 0);
  checkStoredOnce(argusd.dataDir(), "halving", sent);
}

TEST_CASE("--max-jobs: a session for a new job over the limit is refused; known jobs go on") {
  ArgusdProcess argusd;
  argusd.setArgs({"--max-jobs", "2"});
  REQUIRE_MESSAGE(argusd.start().isOk(), argusd.stderrTail());
  auto hello = [&](const std::string& job) {
    RawClient c;
    REQUIRE(c.connect(argusd.ingestPort()).isOk());
    wire::ServerMessage reply;
    REQUIRE(c.hello(makeHello(job, 0), &reply).isOk());
    return reply;
  };
  CHECK(hello("job-a").kind == wire::ServerMessage::Kind::kWelcome);
  CHECK(hello("job-b").kind == wire::ServerMessage::Kind::kWelcome);
  wire::ServerMessage refused = hello("job-c");
  REQUIRE(refused.kind == wire::ServerMessage::Kind::kClose);
  CHECK(refused.close.code == Status::Code::kResourceExhausted);
  CHECK_MESSAGE(refused.close.reason.find("too many jobs (argusd keeps at most 2") != std::string::npos, refused.close.reason);
  CHECK(hello("job-a").kind == wire::ServerMessage::Kind::kWelcome);
  REQUIRE(argusd.stop() == 0);
}
