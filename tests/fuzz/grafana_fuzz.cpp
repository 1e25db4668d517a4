// Fuzzes the Grafana datasource's request handling (query/http/grafana_api.* and its
// helpers): body parsing, target resolution, step series and tables, over a small store of
// 2 ranks x 8 steps made once per process.
//
// Input: ENDPOINT kSeparator BODY, ENDPOINT one of the names after /api/v1/grafana/
// ("query", "search", ...). Invariants: the answer is 200, 400, 404 or 422 (never 500, no
// exception escapes); its body is JSON; a 200 from a POST endpoint is an array; an error
// carries "error" and "message".
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "query/http/http_router.h"
#include "storage/rocks_store.h"
#include "tests/fuzz/fuzz_util.h"

using namespace argus;

namespace {

struct Server {
  std::string dir;
  std::unique_ptr<storage::RocksStore> store;
  std::unique_ptr<query::HttpRouter> router;

  Server() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "argus-grafana-fuzz-XXXXXX").string();
    FUZZ_CHECK(mkdtemp(tmpl.data()) != nullptr);
    dir = tmpl;
    auto opened = storage::RocksStore::openRocks(dir, storage::StoreOptions{});
    FUZZ_CHECK(opened.isOk());
    store = std::move(opened).value();
    auto job = store->ensureJob("demo");
    FUZZ_CHECK(job.isOk());
    for (uint32_t rank = 0; rank < 2; ++rank) {
      std::vector<model::StepRecord> records(8);
      for (uint64_t step = 0; step < records.size(); ++step) {
        model::StepRecord& r = records[step];
        r.rank = rank;
        r.step = step;
        r.start_ns = 1'764'000'000'000'000'000 + static_cast<int64_t>(step) * 1'000'000'000;
        r.iter_ns = 100'000'000 * (rank + 1) + static_cast<int64_t>(step);
        r.end_ns = r.start_ns + r.iter_ns;
      }
      model::RankTopology topology;
      topology.rank = rank;
      storage::WriteRequest w;
      w.job = *job;
      w.topology = &topology;
      w.records = records;
      FUZZ_CHECK(store->write(w).isOk());
    }
    router = std::make_unique<query::HttpRouter>(*store, nullptr);
  }
  ~Server() {
    router.reset();
    store.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Server server;
  auto pieces = fuzz::splitPieces(std::string_view(reinterpret_cast<const char*>(data), size), 2);
  if (pieces.size() != 2) return 0;
  const std::string endpoint(pieces[0]);
  query::HttpResponse r = server.router->handle({"POST", "/api/v1/grafana/" + endpoint, std::string(pieces[1]), ""});
  FUZZ_CHECK(r.status == 200 || r.status == 400 || r.status == 404 || r.status == 405 || r.status == 422);
  nlohmann::json body = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(!body.is_discarded());
  if (r.status == 200) {
    FUZZ_CHECK(body.is_array());
  } else {
    FUZZ_CHECK(body.is_object() && body["error"].is_string() && body["message"] == body["error"]);
  }
  return 0;
}
