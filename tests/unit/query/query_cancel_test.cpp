// QueryOptions::cancel: a query whose flag is set stops at its next check with a clear error,
// and the same engine runs the next query normally.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "query/common/errors.h"
#include "query/engine.h"
#include "simulate/synthetic_steps.h"
#include "storage/store.h"
#include "tests/unit/storage/store_test_util.h"

using namespace argus;

TEST_CASE("a cancelled query stops with an error; the next one runs") {
  std::string dir = (std::filesystem::temp_directory_path() / ("argus-cancel-" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(dir);
  {
    auto store = storage::Store::open(dir);
    REQUIRE(store.isOk());
    auto job = (*store)->ensureJob("j");
    REQUIRE(job.isOk());
    simulate::SyntheticSteps gen(0);
    std::vector<model::StepRecord> records;
    for (int i = 0; i < 40; ++i) records.push_back(gen.next());
    REQUIRE(storage::testutil::writeRecords(**store, *job, records).isOk());

    query::QueryEngine engine(**store);
    std::atomic<bool> cancel{true};
    query::QueryOptions options;
    options.cancel = &cancel;
    CHECK_THROWS_WITH_AS(engine.run("SELECT count(*) FROM kernels", options), "execution error: query cancelled on request", query::ExecutionError);
    cancel = false;
    query::QueryResult r = engine.run("SELECT count(*) FROM steps", options);
    CHECK(r.value(0, 0).bigintValue() == 40);
  }
  std::filesystem::remove_all(dir);
}
