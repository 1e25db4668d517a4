// GET /api/v1/scan through HttpRouter: the byte bound of one answer.
#include <doctest/doctest.h>

#include <vector>

#include "model/step_record.h"
#include "query/http/http_router.h"
#include "tests/unit/storage/store_test_util.h"

using namespace argus;

TEST_CASE("a raw scan's answer ends at its byte bound, flagged truncated like one cut by limit") {
  storage::testutil::TempDir dir;
  auto store = storage::testutil::openStore(dir.path());
  auto job = store->ensureJob("wide");
  REQUIRE(job.isOk());
  std::vector<model::StepRecord> recs;
  for (uint64_t step = 0; step < 200; ++step) {
    model::StepRecord r;
    r.rank = 0;
    r.step = step;
    r.start_ns = static_cast<int64_t>(step) * 1000;
    r.end_ns = r.start_ns + 500;
    recs.push_back(r);
  }
  REQUIRE(storage::testutil::writeRecords(*store, *job, recs).isOk());
  query::HttpRouter router(*store, nullptr);
  auto scan = [&] { return router.handle({"GET", "/api/v1/scan?job=wide&limit=1000000", "", ""}); };
  query::HttpResponse whole = scan();
  REQUIRE(whole.status == 200);
  CHECK(whole.body.find("\"rows\":200,\"truncated\":false") != std::string::npos);
  router.setMaxScanBytes(2000);
  query::HttpResponse cut = scan();
  REQUIRE(cut.status == 200);
  CHECK(cut.body.find("\"truncated\":true") != std::string::npos);
  CHECK(cut.body.size() < 2000 + 1000);  // the row that crossed the bound, and the stats
  CHECK(cut.body.size() < whole.body.size() / 4);
}
