// End to end against the real argusd: records sent with StepSender are acknowledged and
// then found by Store::scan; re-delivery is idempotent; Goodbye and SIGTERM are clean.
#include <doctest/doctest.h>

#include <thread>

#include "tests/integration/ingest_test_util.h"
#include "tests/unit/hex_bytes.h"

using namespace argus;
using namespace argus::testing;

TEST_CASE("StepSender records are acknowledged and stored exactly once") {
  ArgusdProcess argusd;
  REQUIRE_MESSAGE(argusd.start().isOk(), argusd.stderrTail());
  constexpr int kRanks = 4;
  constexpr int kSteps = 300;
  std::map<std::pair<uint32_t, uint64_t>, int64_t> sent;
  std::vector<std::unique_ptr<wire::StepSender>> senders;
  std::vector<SyntheticSteps> gens;
  for (uint32_t r = 0; r < kRanks; ++r) {
    gens.emplace_back(r, 64);
    senders.push_back(std::make_unique<wire::StepSender>(senderOptions(argusd.ingestPort(), "roundtrip", r)));
    addDictionary(*senders.back(), gens.back());
  }
  for (int s = 0; s < kSteps; ++s) {
    for (uint32_t r = 0; r < kRanks; ++r) {
      model::StepRecord rec = gens[r].next();
      sent[{r, rec.step}] = rec.iter_ns;
      REQUIRE(senders[r]->send(std::move(rec)).isOk());
    }
  }
  for (auto& s : senders) {
    Status st = s->flush(30s);
    REQUIRE_MESSAGE(st.isOk(), st.toString(), argusd.stderrTail());
    auto stats = s->stats();
    CHECK(stats.records_acked == kSteps);
    CHECK(stats.sessions == 1);
    CHECK(stats.records_resent == 0);
    MESSAGE("bytes per record on the wire (encoded StepRecord): " << stats.record_bytes_sent / stats.records_sent
                                                                  << ", frames " << stats.frames_sent);
    CHECK(s->close(5s).isOk());
  }
  CHECK(argusd.stop() == 0);

  StoredRows rows;
  Status s = scanSteps(argusd.dataDir(), "roundtrip", &rows);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  CHECK(rows.size() == sent.size());
  size_t mismatched = 0, duplicated = 0;
  for (const auto& [key, iter_ns] : sent) {
    auto it = rows.find(key);
    if (it == rows.end()) {
      ++mismatched;
      continue;
    }
    if (it->second.size() != 1) ++duplicated;
    if (it->second[0].iter_ns != iter_ns) ++mismatched;
  }
  CHECK(mismatched == 0);
  CHECK(duplicated == 0);
}

TEST_CASE("re-delivery in a new session is idempotent") {
  ArgusdProcess argusd;
  REQUIRE(argusd.start().isOk());
  SyntheticSteps gen(7, 16);
  std::vector<model::StepRecord> records;
  for (int i = 0; i < 20; ++i) records.push_back(gen.next());
  for (int session = 0; session < 3; ++session) {
    RawClient c;
    REQUIRE(c.connect(argusd.ingestPort()).isOk());
    wire::ServerMessage reply;
    REQUIRE(c.hello(makeHello("redeliver", 7), &reply).isOk());
    REQUIRE(reply.kind == wire::ServerMessage::Kind::kWelcome);
    wire::Dictionary dict;
    dict.kernels = gen.dictionary().kernels;
    REQUIRE(c.conn.write(wire::encodeDictionary(dict)).isOk());
    // The same 20 records every time, in two batches; session 3 re-sends only the tail.
    size_t from = session == 2 ? 10 : 0;
    std::vector<model::StepRecord> a(records.begin() + from, records.begin() + 15);
    std::vector<model::StepRecord> b(records.begin() + 15, records.end());
    REQUIRE(c.sendRecords(a).isOk());
    REQUIRE(c.sendRecords(b).isOk());
    REQUIRE(c.waitAck(c.next_seq - 1).isOk());
    REQUIRE(c.conn.write(wire::encodeGoodbye()).isOk());
    wire::CloseMsg close = c.waitClose();
    CHECK(close.code == Status::Code::kOk);
    CHECK(close.reason == "goodbye");
  }
  REQUIRE(argusd.stop() == 0);
  StoredRows rows;
  REQUIRE(scanSteps(argusd.dataDir(), "redeliver", &rows).isOk());
  CHECK(rows.size() == records.size());
  for (const auto& r : records) {
    auto it = rows.find({7, r.step});
    REQUIRE(it != rows.end());
    CHECK(it->second.size() == 1);
  }
}

TEST_CASE("StepSender reconnects to a restarted argusd and re-sends what was not acknowledged") {
  ArgusdProcess argusd;
  REQUIRE(argusd.start().isOk());
  uint16_t port = argusd.ingestPort();
  SyntheticSteps gen(3, 32);
  wire::StepSender sender(senderOptions(port, "reconnect", 3));
  addDictionary(sender, gen);
  for (int i = 0; i < 50; ++i) REQUIRE(sender.send(gen.next()).isOk());
  REQUIRE(sender.flush(20s).isOk());
  argusd.kill();
  // Sent while argusd is down: buffered, then delivered in the next session.
  for (int i = 0; i < 50; ++i) REQUIRE(sender.send(gen.next()).isOk());
  CHECK(!sender.flush(200ms).isOk());
  argusd.setIngestPort(port);
  REQUIRE_MESSAGE(argusd.start().isOk(), argusd.stderrTail());
  Status f = sender.flush(30s);
  REQUIRE_MESSAGE(f.isOk(), f.toString());
  auto stats = sender.stats();
  CHECK(stats.records_acked == 100);
  CHECK(stats.sessions >= 2);
  CHECK(sender.close(5s).isOk());
  REQUIRE(argusd.stop() == 0);
  StoredRows rows;
  REQUIRE(scanSteps(argusd.dataDir(), "reconnect", &rows).isOk());
  CHECK(rows.size() == 100);
  for (const auto& [key, v] : rows) CHECK(v.size() == 1);
}

TEST_CASE("an older sender's encoding-1 records are accepted and stored; an unknown encoding is refused") {
  ArgusdProcess argusd;
  REQUIRE_MESSAGE(argusd.start().isOk(), argusd.stderrTail());
  {
    // The worked example of docs/wire/step-record.md as version 1 wrote it: rank 3, steps
    // 100 (keyframe) and 101 (delta), 250 ms and 250.0005 ms.
    std::vector<std::string> v1 = {
        unhex("110364008080d0e2c6bfce972f80cab5ee0100008084af5f80b8b872000080bce7d101000000000003022a8ac7e44ef93d74"
              "11904e01c3750f18a3db2bf932808e258009021101020100dec00000000000001500028080800180ea30000200bc0a000000"
              "0000003200"),
        unhex("100164000000d00fe8070000e80700000000000000000000000000e8070000009f1f00000100")};
    RawClient c;
    REQUIRE(c.connect(argusd.ingestPort()).isOk());
    wire::Hello h = makeHello("older", 3);
    h.encoding = 1;
    wire::ServerMessage reply;
    REQUIRE(c.hello(h, &reply).isOk());
    REQUIRE(reply.kind == wire::ServerMessage::Kind::kWelcome);
    REQUIRE(c.conn.write(wire::encodeStepBatch(1, v1)).isOk());
    REQUIRE(c.waitAck(2).isOk());
    REQUIRE(c.conn.write(wire::encodeGoodbye()).isOk());
    CHECK(c.waitClose().code == Status::Code::kOk);
  }
  {
    RawClient c;
    REQUIRE(c.connect(argusd.ingestPort()).isOk());
    wire::Hello h = makeHello("newer", 3);
    h.encoding = wire::kStepEncodingVersion + 1;
    wire::ServerMessage reply;
    REQUIRE(c.hello(h, &reply).isOk());
    REQUIRE(reply.kind == wire::ServerMessage::Kind::kClose);
    CHECK(reply.close.code == Status::Code::kVersionMismatch);
    CHECK_MESSAGE(reply.close.reason.find("encoding 3 is not supported (argusd reads encodings 1 to 2)") != std::string::npos, reply.close.reason);
  }
  REQUIRE(argusd.stop() == 0);
  checkStoredOnce(argusd.dataDir(), "older", {{{3, 100}, 250'000'000}, {{3, 101}, 250'000'500}});
}
