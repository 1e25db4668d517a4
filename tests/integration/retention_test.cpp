// Retention end to end: a job whose last write is older than its retention is dropped by
// argusd's sealer thread, and the same job name can stream again afterwards.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "cli/http_client.h"
#include "tests/integration/ingest_test_util.h"

using namespace argus;
using namespace argus::testing;

namespace {

void stream(uint16_t port, uint64_t first_step, int steps) {
  SyntheticOptions o;
  o.signatures = 8;
  o.first_step = first_step;
  SyntheticSteps gen(0, o);
  wire::StepSender sender(senderOptions(port, "short-lived", 0));
  addDictionary(sender, gen);
  for (int i = 0; i < steps; ++i) REQUIRE(sender.send(gen.next()).isOk());
  REQUIRE(sender.close(std::chrono::seconds(30)).isOk());
}

size_t jobCount(uint16_t http) {
  auto reply = cli::httpRequest("127.0.0.1", http, "GET", "/api/v1/jobs");
  REQUIRE(reply.isOk());
  return nlohmann::json::parse(reply->body)["jobs"].size();
}

}  // namespace

TEST_CASE("argusd drops a job past its retention and takes the name again afterwards") {
  ArgusdProcess argusd;
  argusd.setHttp(true);
  argusd.setArgs({"--seal-interval-ms", "100", "--retention-interval-s", "1"});
  REQUIRE(argusd.start().isOk());
  stream(argusd.ingestPort(), 0, 5);
  CHECK(argusd.stop() == 0);

  // Set a 1 s retention with the CLI while argusd is down (the store is embedded there).
  std::string command = std::string(std::getenv("ARGUS_BIN")) + " jobs --data " + argusd.dataDir() + " --retention short-lived=1s >/dev/null";
  REQUIRE(std::system(command.c_str()) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));

  REQUIRE(argusd.start().isOk());
  bool dropped = false;
  for (int i = 0; i < 50 && !dropped; ++i) {
    dropped = jobCount(argusd.httpPort()) == 0;
    if (!dropped) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK_MESSAGE(dropped, argusd.stderrTail());

  stream(argusd.ingestPort(), 100, 3);  // the name is registered anew
  CHECK(jobCount(argusd.httpPort()) == 1);
  CHECK(argusd.stop() == 0);

  StoredRows rows;
  REQUIRE(scanSteps(argusd.dataDir(), "short-lived", &rows).isOk());
  REQUIRE(rows.size() == 3);
  CHECK(rows.begin()->first.second == 100);
}
