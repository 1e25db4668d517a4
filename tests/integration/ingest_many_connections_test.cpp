// 2,000 concurrent connections on loopback, each sending a few records: all acknowledged,
// all stored.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include "tests/integration/ingest_test_util.h"

using namespace argus;
using namespace argus::testing;

TEST_CASE("2000 concurrent sessions are all acknowledged") {
  constexpr uint32_t kSessions = 2000;
  constexpr int kRecords = 3;
  // Each connection costs a descriptor here and one in argusd (which inherits the limit).
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_cur < 2 * kSessions + 200) {
    lim.rlim_cur = std::min<rlim_t>(lim.rlim_max, 4 * kSessions + 1000);
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  getrlimit(RLIMIT_NOFILE, &lim);
  REQUIRE_MESSAGE(lim.rlim_cur >= kSessions + 200, "RLIMIT_NOFILE too low: " << lim.rlim_cur);

  ArgusdProcess argusd;
  REQUIRE(argusd.start().isOk());
  auto t0 = std::chrono::steady_clock::now();

  std::vector<RawClient> clients(kSessions);
  for (uint32_t i = 0; i < kSessions; ++i) {
    Status s = clients[i].connect(argusd.ingestPort());
    REQUIRE_MESSAGE(s.isOk(), "connection " << i << ": " << s.toString());
  }
  // Every connection is open before any says Hello: all 2000 sessions are live at once.
  SyntheticOptions o;
  o.signatures = 8;
  for (uint32_t i = 0; i < kSessions; ++i) {
    SyntheticSteps gen(i, o);
    std::vector<model::StepRecord> recs;
    for (int k = 0; k < kRecords; ++k) recs.push_back(gen.next());
    REQUIRE(clients[i].conn.write(wire::encodeHello(makeHello("many", i))).isOk());
    REQUIRE(clients[i].sendRecords(recs).isOk());
  }
  size_t welcomed = 0, acked = 0;
  for (uint32_t i = 0; i < kSessions; ++i) {
    wire::ServerMessage m;
    Status s = clients[i].conn.readServerMessage(&m, 30s);
    REQUIRE_MESSAGE(s.isOk(), "session " << i << ": " << s.toString());
    if (m.kind == wire::ServerMessage::Kind::kWelcome) ++welcomed;
    if (clients[i].waitAck(kRecords).isOk()) ++acked;
  }
  CHECK(welcomed == kSessions);
  CHECK(acked == kSessions);
  for (auto& c : clients) REQUIRE(c.conn.write(wire::encodeGoodbye()).isOk());
  size_t clean = 0;
  for (auto& c : clients) clean += c.waitClose().code == Status::Code::kOk;
  CHECK(clean == kSessions);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE(kSessions << " sessions x " << kRecords << " records acknowledged and closed in " << secs << " s");
  clients.clear();
  REQUIRE(argusd.stop() == 0);

  StoredRows rows;
  REQUIRE(scanSteps(argusd.dataDir(), "many", &rows).isOk());
  CHECK(rows.size() == kSessions * kRecords);
}
