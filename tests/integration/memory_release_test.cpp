// argusd keeps the memory a query frees for the next query, and returns it to the OS at
// the end of the first 10-s interval in which no statement started or ran
// (cli/argusd_main.cpp, cli/malloc_conf.cpp, base/allocator.h).
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

#include "tests/integration/ingest_test_util.h"

using namespace argus;
using namespace argus::testing;

TEST_CASE("argusd keeps freed query memory while queries run and returns it once they stop") {
  ArgusdProcess argusd;
  argusd.setHttp(true);
  REQUIRE(argusd.start().isOk());
  if (procFile(argusd.pid(), "maps").find("libjemalloc") == std::string::npos) {
    MESSAGE("argusd runs without jemalloc (a sanitizer build): its allocator keeps nothing to return");
    CHECK(argusd.stop() == 0);
    return;
  }
  const long idle = rssKib(argusd.pid());
  // Sorting 5 M values holds ~80 MB (keys, order, the column) until the query ends.
  Result<cli::HttpReply> r = cli::httpRequest("127.0.0.1", argusd.httpPort(), "POST", "/api/v1/query",
                                              "SELECT count(*) FROM (SELECT * FROM generate_series(1, 5000000) ORDER BY 1 DESC)");
  REQUIRE(r.isOk());
  REQUIRE(r->status == 200);
  const long kept = rssKib(argusd.pid());
  INFO("RSS idle " << idle << " KiB, after the query " << kept << " KiB");
  REQUIRE(kept > idle + 40'000);  // freed, but kept for the next query
  // Returned between one and two idle intervals (10 s each) after the query.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(40);
  long now = kept;
  while (now > idle + (kept - idle) / 4 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    now = rssKib(argusd.pid());
  }
  INFO("RSS once idle: " << now << " KiB");
  CHECK(now <= idle + (kept - idle) / 4);
  CHECK(argusd.stop() == 0);
}
