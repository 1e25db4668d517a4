// Committer: group commit, ack only after a successful write, failure isolation, budget.
#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "ingest/committer.h"

using namespace argus;
using namespace argus::ingest;

namespace {

// A Store that records writeGroup calls; the first call can be held until released.
class FakeStore : public storage::Store {
 public:
  std::mutex mu;
  std::condition_variable cv;
  bool hold = false;
  bool hold_first_only = false;         // with hold: only the first writeGroup call waits
  int calls = 0;
  std::vector<size_t> group_sizes;      // requests per writeGroup call
  std::vector<uint64_t> written_steps;  // every record's step, every entry's first seq
  std::vector<std::string> written_values;  // every head entry's value
  Status fail_all;                      // returned by writeGroup when set
  uint32_t bad_rank = UINT32_MAX;       // requests holding this rank fail with InvalidArgument

  Result<storage::JobId> ensureJob(std::string_view) override { return storage::JobId{1}; }
  Result<storage::JobInfo> findJob(std::string_view) const override { return Status::notFound("x"); }
  std::vector<storage::JobInfo> listJobs() const override { return {}; }
  Status setRetention(std::string_view, int64_t) override { return Status::ok(); }
  Status write(const storage::WriteRequest& r) override {
    std::lock_guard lock(mu);
    for (const auto& rec : r.records)
      if (rec.rank == bad_rank) return Status::invalidArgument("bad rank");
    for (const auto& e : r.entries)
      if (e.rank == bad_rank) return Status::invalidArgument("bad rank");
    for (const auto& rec : r.records) written_steps.push_back(rec.step);
    for (const auto& e : r.entries) {
      written_steps.push_back(e.first_seq);
      written_values.emplace_back(e.value);
    }
    return Status::ok();
  }
  Status writeGroup(std::span<const storage::WriteRequest> requests) override {
    std::unique_lock lock(mu);
    int call = calls++;
    cv.notify_all();  // waitForCalls
    cv.wait(lock, [&] { return !hold || (hold_first_only && call > 0); });
    group_sizes.push_back(requests.size());
    if (!fail_all.isOk()) return fail_all;
    for (const auto& r : requests)
      for (const auto& rec : r.records)
        if (rec.rank == bad_rank) return Status::invalidArgument("bad rank");
    for (const auto& r : requests)
      for (const auto& e : r.entries)
        if (e.rank == bad_rank) return Status::invalidArgument("bad rank");
    for (const auto& r : requests) {
      for (const auto& rec : r.records) written_steps.push_back(rec.step);
      for (const auto& e : r.entries) {
        written_steps.push_back(e.first_seq);
        written_values.emplace_back(e.value);
      }
    }
    return Status::ok();
  }
  uint64_t newSessionId() override { return ++sessions; }
  uint32_t blockSteps() const override { return 256; }
  uint64_t headBytes() const override { return 0; }
  uint64_t sessions = 0;
  Status sealReady() override { return Status::ok(); }
  Status sealAll() override { return Status::ok(); }
  Result<std::unique_ptr<storage::ScanCursor>> scan(const storage::ScanSpec&) const override {
    return Status::notFound("x");
  }
  Result<std::unique_ptr<storage::ScanParts>> scanParts(const storage::ScanSpec&, size_t) const override {
    return Status::notFound("x");
  }
  Result<std::optional<uint64_t>> lastStep(std::string_view) const override { return Status::notFound("x"); }
  Result<std::vector<model::RankTopology>> topology(std::string_view) const override { return Status::notFound("x"); }
  Result<model::KernelDictEntry> kernelName(std::string_view, uint64_t) const override { return Status::notFound("x"); }
  Result<std::vector<model::KernelDictEntry>> kernelNames(std::string_view) const override { return Status::notFound("x"); }
  Result<std::vector<model::StackDictEntry>> stackNames(std::string_view) const override { return Status::notFound("x"); }
  Result<std::vector<model::StringDictEntry>> names(std::string_view) const override { return Status::notFound("x"); }
  Status addFinding(std::string_view, std::string_view) override { return Status::ok(); }
  Result<std::vector<std::string>> findings(std::string_view) const override { return std::vector<std::string>{}; }
  Status dropJob(std::string_view) override { return Status::ok(); }
  Status applyRetention(int64_t) override { return Status::ok(); }
  SizeInfo size() const override { return {}; }

  // Waits until writeGroup has been entered n times (a held call counts); false after 60 s.
  bool waitForCalls(int n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(60), [&] { return calls >= n; });
  }

  void release() {
    std::lock_guard lock(mu);
    hold = false;
    cv.notify_all();
  }
};

struct Sink : CommitSink {
  std::mutex mu;
  std::vector<std::pair<uint64_t, Status>> outcomes;
  size_t bytes = 0;
  void onCommitted(uint64_t up_to, size_t b, const Status& s) override {
    std::lock_guard lock(mu);
    outcomes.emplace_back(up_to, s);
    bytes += b;
  }
};

CommitItem item(std::shared_ptr<Sink> sink, uint32_t rank, uint64_t step, uint64_t up_to) {
  CommitItem it;
  it.sink = sink;
  it.job = 1;
  model::StepRecord r;
  r.rank = rank;
  r.step = step;
  it.records.push_back(r);
  it.up_to = up_to;
  it.bytes = 1000;
  return it;
}

}  // namespace

TEST_CASE("queued batches share one writeGroup and are acknowledged after it") {
  FakeStore store;
  store.hold = true;
  IngestMetrics metrics;
  ByteBudget budget(1 << 20);
  CommitterOptions one_thread;
  one_thread.threads = 1;  // a second thread would take the queued batches as a group of its own
  Committer c(store, metrics, budget, one_thread);
  c.start();
  auto a = std::make_shared<Sink>(), b = std::make_shared<Sink>();
  c.submit(item(a, 0, 1, 1));  // taken alone, held in writeGroup
  REQUIRE(store.waitForCalls(1));  // the committer holds the first item in its write; queue more
  c.submit(item(a, 0, 2, 2));
  c.submit(item(b, 1, 1, 1));
  c.submit(item(b, 1, 2, 2));
  CHECK(budget.used() == 4000);
  {
    std::lock_guard lock(a->mu);
    CHECK(a->outcomes.empty());  // nothing acknowledged before the write returns
  }
  store.release();
  c.drain();
  CHECK(store.written_steps.size() == 4);
  CHECK(store.group_sizes.size() <= 2);
  CHECK(store.group_sizes.back() >= 3);  // the three queued behind the held write: one group
  CHECK(a->outcomes.size() == 2);
  CHECK(a->outcomes.back().first == 2);
  CHECK(b->outcomes.back().first == 2);
  CHECK(budget.used() == 0);
  CHECK(metrics.records.load() == 4);
  CHECK(metrics.inflight_bytes.load() == 0);
  c.stop();
}

TEST_CASE("with two committer threads a sink's batches are still written one after another, in order") {
  FakeStore store;
  store.hold = true;
  store.hold_first_only = true;
  IngestMetrics metrics;
  ByteBudget budget(1 << 20);
  CommitterOptions two;
  two.threads = 2;
  Committer c(store, metrics, budget, two);
  c.start();
  auto a = std::make_shared<Sink>();
  c.submit(item(a, 0, 1, 1));  // first group: held in writeGroup
  REQUIRE(store.waitForCalls(1));
  c.submit(item(a, 0, 2, 2));  // the idle thread must not write it: seq 2 would be durable before seq 1
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  {
    std::lock_guard lock(store.mu);
    CHECK(store.written_steps.empty());
    CHECK(store.calls == 1);
  }
  {
    std::lock_guard lock(a->mu);
    CHECK(a->outcomes.empty());
  }
  store.release();
  c.drain();
  CHECK(store.written_steps == std::vector<uint64_t>{1, 2});
  REQUIRE(a->outcomes.size() == 2);
  CHECK(a->outcomes[0].first == 1);
  CHECK(a->outcomes[1].first == 2);
  CHECK(budget.used() == 0);
  c.stop();
}

TEST_CASE("a failed write acknowledges nothing") {
  FakeStore store;
  store.fail_all = Status::ioError("disk full");
  IngestMetrics metrics;
  ByteBudget budget(1 << 20);
  Committer c(store, metrics, budget);
  c.start();
  auto a = std::make_shared<Sink>();
  c.submit(item(a, 0, 1, 1));
  c.drain();
  REQUIRE(a->outcomes.size() == 1);
  CHECK(a->outcomes[0].second.code() == Status::Code::kIoError);
  CHECK(metrics.records.load() == 0);
  CHECK(metrics.commit_failures.load() == 1);
  CHECK(budget.used() == 0);
}

TEST_CASE("a data-dependent refusal fails only the bad batch") {
  FakeStore store;
  store.hold = true;
  store.bad_rank = 7;
  IngestMetrics metrics;
  ByteBudget budget(1 << 20);
  std::mutex mu;
  std::vector<std::pair<uint32_t, uint64_t>> durable;  // (rank, step) told to on_durable
  CommitterOptions options;
  options.on_durable = [&](storage::JobId job, std::span<const model::StepSummary> records) {
    std::lock_guard lock(mu);
    CHECK(job == 1);
    for (const model::StepSummary& r : records) durable.emplace_back(r.rank, r.step);
  };
  Committer c(store, metrics, budget, options);
  auto good = std::make_shared<Sink>(), bad = std::make_shared<Sink>();
  // Queue before starting so that all three land in one group.
  c.submit(item(good, 0, 1, 1));
  c.submit(item(bad, 7, 1, 1));
  c.submit(item(good, 0, 2, 2));
  store.release();
  c.start();
  c.drain();
  // Only what became durable is told, a summary of each record.
  CHECK(durable == std::vector<std::pair<uint32_t, uint64_t>>{{0, 1}, {0, 2}});
  REQUIRE(good->outcomes.size() == 2);
  CHECK(good->outcomes[0].second.isOk());
  CHECK(good->outcomes[1].second.isOk());
  REQUIRE(bad->outcomes.size() == 1);
  CHECK(bad->outcomes[0].second.code() == Status::Code::kInvalidArgument);
  CHECK(store.written_steps.size() == 2);
}

TEST_CASE("after stop, submits fail with Unavailable") {
  FakeStore store;
  IngestMetrics metrics;
  ByteBudget budget(1 << 20);
  Committer c(store, metrics, budget);
  c.start();
  c.stop();
  auto a = std::make_shared<Sink>();
  c.submit(item(a, 0, 1, 1));
  REQUIRE(a->outcomes.size() == 1);
  CHECK(a->outcomes[0].second.code() == Status::Code::kUnavailable);
  CHECK(budget.used() == 0);
}

TEST_CASE("ByteBudget wakes waiters when bytes are released") {
  ByteBudget budget(100);
  int woken = 0;
  budget.whenAvailable([&] { ++woken; });
  CHECK(woken == 1);  // not exhausted: runs at once
  budget.charge(150);
  budget.whenAvailable([&] { ++woken; });
  CHECK(woken == 1);
  budget.release(40);  // 110 still >= 100
  CHECK(woken == 1);
  budget.release(20);
  CHECK(woken == 2);
}

TEST_CASE("head entries reach the store as views of their batch's arena, and their buffers are reused") {
  FakeStore store;
  store.hold = true;
  IngestMetrics metrics;
  ByteBudget budget(1 << 20);
  CommitterOptions one_thread;
  one_thread.threads = 1;
  std::vector<std::pair<uint32_t, uint64_t>> durable;  // one committer thread: no lock needed after drain
  one_thread.on_durable = [&](storage::JobId, std::span<const model::StepSummary> records) {
    for (const model::StepSummary& r : records) durable.emplace_back(r.rank, r.step);
  };
  Committer c(store, metrics, budget, one_thread);
  c.start();
  auto a = std::make_shared<Sink>();
  auto encodedItem = [&](std::string arena, std::vector<HeadEntries::Entry> entries, uint64_t up_to) {
    CommitItem it;
    it.sink = a;
    it.job = 1;
    it.encoded = c.takeEncodedBuffer();
    CHECK(it.encoded.arena.empty());
    CHECK(it.encoded.entries.empty());
    it.encoded.arena = std::move(arena);  // short arenas live inside the string (SSO): moved, they move
    it.encoded.records = entries.size();
    it.encoded.entries = std::move(entries);
    it.encoded.summaries.push_back(model::StepSummary{.rank = 0, .step = up_to * 10});  // as a session summarizes its last record
    it.up_to = up_to;
    it.bytes = 100;
    return it;
  };
  c.submit(encodedItem("abc", {{0, 0, 1, 0, 2}, {0, 0, 2, 2, 1}}, 2));
  REQUIRE(store.waitForCalls(1));
  std::string big(5000, 'x');
  big[4999] = 'y';
  c.submit(encodedItem(big, {{0, 0, 3, 0, 4000}, {0, 1, 3, 4000, 1000}}, 4));
  c.submit(encodedItem("de", {{0, 1, 4, 0, 2}}, 5));
  store.release();
  c.drain();
  REQUIRE(store.written_values.size() == 5);
  CHECK(store.written_values[0] == "ab");
  CHECK(store.written_values[1] == "c");
  CHECK(store.written_values[2] == std::string(4000, 'x'));
  CHECK(store.written_values[3] == std::string(999, 'x') + "y");
  CHECK(store.written_values[4] == "de");
  CHECK(store.written_steps == std::vector<uint64_t>{1, 2, 3, 3, 4});
  CHECK(durable == std::vector<std::pair<uint32_t, uint64_t>>{{0, 20}, {0, 40}, {0, 50}});  // the batches' summaries
  CHECK(metrics.records.load() == 5);
  CHECK(a->outcomes.back().first == 5);
  CHECK(budget.used() == 0);
  // A committed batch's buffer comes back cleared, its capacity kept.
  HeadEntries reused = c.takeEncodedBuffer();
  CHECK(reused.arena.empty());
  CHECK(reused.entries.empty());
  CHECK(reused.entries.capacity() > 0);
  CHECK(reused.summaries.empty());
  c.stop();
}
