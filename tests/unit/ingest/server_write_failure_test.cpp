// A store that refuses writes (a full disk, a failing device): argusd acknowledges nothing,
// closes the sessions with IOError, keeps serving, and StepSender re-sends everything once
// the store takes writes again. Real Server, real sockets, real RocksDB underneath.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "ingest/server.h"
#include "simulate/synthetic_steps.h"
#include "storage/rocks_store.h"
#include "wire/step_sender.h"

using namespace argus;
using namespace std::chrono_literals;

namespace {

// Forwards to a real store; writes fail with IOError while `failing` is set.
class FailingStore : public storage::Store {
 public:
  explicit FailingStore(storage::Store& real) : real_(real) {}
  std::atomic<bool> failing{false};
  std::atomic<int> refused{0};

  Result<storage::JobId> ensureJob(std::string_view job) override { return real_.ensureJob(job); }
  Result<storage::JobInfo> findJob(std::string_view job) const override { return real_.findJob(job); }
  std::vector<storage::JobInfo> listJobs() const override { return real_.listJobs(); }
  Status setRetention(std::string_view job, int64_t ns) override { return real_.setRetention(job, ns); }
  Status write(const storage::WriteRequest& r) override { return writeGroup(std::span(&r, 1)); }
  Status writeGroup(std::span<const storage::WriteRequest> requests) override {
    if (failing) {
      ++refused;
      return Status::ioError("injected: no space left on device");
    }
    return real_.writeGroup(requests);
  }
  uint64_t newSessionId() override { return real_.newSessionId(); }
  uint32_t blockSteps() const override { return real_.blockSteps(); }
  uint64_t headBytes() const override { return real_.headBytes(); }
  Status sealReady() override { return real_.sealReady(); }
  Status sealAll() override { return real_.sealAll(); }
  Result<std::unique_ptr<storage::ScanCursor>> scan(const storage::ScanSpec& s) const override { return real_.scan(s); }
  Result<std::unique_ptr<storage::ScanParts>> scanParts(const storage::ScanSpec& s, size_t parts) const override {
    return real_.scanParts(s, parts);
  }
  Result<std::optional<uint64_t>> lastStep(std::string_view job) const override { return real_.lastStep(job); }
  Result<std::vector<model::RankTopology>> topology(std::string_view job) const override { return real_.topology(job); }
  Result<model::KernelDictEntry> kernelName(std::string_view job, uint64_t sig) const override { return real_.kernelName(job, sig); }
  Result<std::vector<model::KernelDictEntry>> kernelNames(std::string_view job) const override { return real_.kernelNames(job); }
  Result<std::vector<model::StackDictEntry>> stackNames(std::string_view job) const override { return real_.stackNames(job); }
  Result<std::vector<model::StringDictEntry>> names(std::string_view job) const override { return real_.names(job); }
  Status addFinding(std::string_view job, std::string_view value) override { return real_.addFinding(job, value); }
  Result<std::vector<std::string>> findings(std::string_view job) const override { return real_.findings(job); }
  Status dropJob(std::string_view job) override { return real_.dropJob(job); }
  Status applyRetention(int64_t now_ns) override { return real_.applyRetention(now_ns); }
  SizeInfo size() const override { return real_.size(); }

 private:
  storage::Store& real_;
};

}  // namespace

TEST_CASE("store write failures: nothing acknowledged, sessions closed with IOError, everything re-sent once writes work") {
  std::string dir = std::filesystem::temp_directory_path() / ("argus-write-failure-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  storage::StoreOptions so;
  so.block_steps = 16;
  auto real = storage::RocksStore::openRocks(dir, so);
  REQUIRE(real.isOk());
  FailingStore store(**real);
  ingest::IngestMetrics metrics;
  ingest::ServerOptions options;
  options.seal_interval = 50ms;
  ingest::Server server(store, metrics, options);
  REQUIRE(server.start().isOk());

  simulate::SyntheticSteps gen(2, 16);
  wire::StepSenderOptions o;
  o.port = server.port();
  o.job = "failing";
  o.topology.rank = 2;
  o.backoff_initial = 5ms;
  o.backoff_max = 50ms;
  wire::StepSender sender(o);
  sender.addKernels(gen.dictionary().kernels);
  for (int i = 0; i < 50; ++i) REQUIRE(sender.send(gen.next()).isOk());
  REQUIRE(sender.flush(20s).isOk());

  store.failing = true;
  for (int i = 0; i < 50; ++i) REQUIRE(sender.send(gen.next()).isOk());
  CHECK_FALSE(sender.flush(500ms).isOk());  // nothing acknowledged while the store refuses
  CHECK(sender.stats().records_acked == 50);
  CHECK(store.refused.load() > 0);
  CHECK(sender.status().isOk());  // IOError is retryable: the sender keeps its records
  CHECK(metrics.commit_failures.load() > 0);

  store.failing = false;
  Status f = sender.flush(20s);
  REQUIRE_MESSAGE(f.isOk(), f.toString());
  CHECK(sender.stats().records_acked == 100);
  CHECK(sender.stats().sessions > 1);
  REQUIRE(sender.close().isOk());
  server.shutdown();
  REQUIRE((*real)->sealAll().isOk());

  storage::ScanSpec spec;
  spec.job = "failing";
  spec.columns = {"step"};
  std::vector<int64_t> steps;
  {
    auto cursor = (*real)->scan(spec);  // holds a snapshot: gone before the store closes
    REQUIRE(cursor.isOk());
    storage::ColumnBatch b;
    bool has = true;
    while ((*cursor)->next(&b, &has).isOk() && has) steps.insert(steps.end(), b.columns[0].ints.begin(), b.columns[0].ints.end());
  }
  REQUIRE(steps.size() == 100);
  for (int64_t i = 0; i < 100; ++i) CHECK(steps[static_cast<size_t>(i)] == i);
  real->reset();
  std::filesystem::remove_all(dir);
}
