// Server::requestFlightRecorderDump: Control{dumpFlightRecorder} reaches the StepSenders of
// the job (and ranks) asked, through their on_dump_request callback, and no others. Real
// Server, real sockets, real RocksDB underneath (docs/wire/protocol.md, "Control").
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "ingest/server.h"
#include "simulate/synthetic_steps.h"
#include "storage/rocks_store.h"
#include "wire/step_sender.h"

using namespace argus;
using namespace std::chrono_literals;

namespace {

// What one sender's callback saw (called on its I/O thread).
struct Requests {
  std::mutex mu;
  std::vector<std::pair<uint64_t, uint64_t>> seen;
  std::vector<std::pair<uint64_t, uint64_t>> get() {
    std::lock_guard lock(mu);
    return seen;
  }
};

struct Rank {
  Requests requests;
  simulate::SyntheticSteps gen;
  std::unique_ptr<wire::StepSender> sender;

  Rank(uint16_t port, const std::string& job, uint32_t rank, bool with_callback) : gen(rank, 8) {
    wire::StepSenderOptions o;
    o.port = port;
    o.job = job;
    o.topology.rank = rank;
    if (with_callback) {
      o.on_dump_request = [this](uint64_t from, uint64_t to) {
        std::lock_guard lock(requests.mu);
        requests.seen.emplace_back(from, to);
      };
    }
    sender = std::make_unique<wire::StepSender>(o);
    sender->addKernels(gen.dictionary().kernels);
    // One acknowledged record: the session is past Hello, so argusd knows its job and rank.
    REQUIRE(sender->send(gen.next()).isOk());
    REQUIRE(sender->flush(20s).isOk());
  }
};

template <typename F>
bool waitFor(F done, std::chrono::milliseconds limit = 10s) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

using Seen = std::vector<std::pair<uint64_t, uint64_t>>;

}  // namespace

TEST_CASE("requestFlightRecorderDump asks the live sessions of the job and ranks given, and only those") {
  std::string dir = std::filesystem::temp_directory_path() / ("argus-fr-request-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto store = storage::RocksStore::openRocks(dir, {});
  REQUIRE(store.isOk());
  {
    ingest::IngestMetrics metrics;
    ingest::Server server(**store, metrics, {});
    REQUIRE(server.start().isOk());
    CHECK(server.requestFlightRecorderDump("fr", {}, 0, 1) == 0);  // nobody connected yet

    Rank r0(server.port(), "fr", 0, true), r1(server.port(), "fr", 1, true), r2(server.port(), "fr", 2, true);
    Rank other(server.port(), "other", 1, false);  // no callback: the request is ignored

    CHECK(server.requestFlightRecorderDump("fr", {}, 3, 5) == 3);
    for (Rank* r : {&r0, &r1, &r2}) {
      CHECK(waitFor([&] { return !r->requests.get().empty(); }));
      CHECK(r->requests.get() == Seen{{3, 5}});
    }

    CHECK(server.requestFlightRecorderDump("fr", {1}, 7, 7) == 1);
    CHECK(waitFor([&] { return r1.requests.get().size() == 2; }));
    CHECK(r1.requests.get() == Seen{{3, 5}, {7, 7}});

    CHECK(server.requestFlightRecorderDump("fr", {0, 2, 9}, 10, UINT64_MAX) == 2);
    CHECK(waitFor([&] { return r0.requests.get().size() == 2 && r2.requests.get().size() == 2; }));
    CHECK(r0.requests.get().back() == std::pair<uint64_t, uint64_t>{10, UINT64_MAX});
    CHECK(r2.requests.get().back() == std::pair<uint64_t, uint64_t>{10, UINT64_MAX});

    CHECK(server.requestFlightRecorderDump("fr", {9}, 0, 1) == 0);
    CHECK(server.requestFlightRecorderDump("nope", {}, 0, 1) == 0);
    CHECK(server.requestFlightRecorderDump("other", {}, 0, 1) == 1);

    // A sender without the callback carries on; so do the others.
    REQUIRE(other.sender->send(other.gen.next()).isOk());
    CHECK(other.sender->flush(10s).isOk());
    std::this_thread::sleep_for(50ms);  // no request after those above arrives at rank 1
    CHECK(r1.requests.get().size() == 2);

    // A session that said Goodbye is no longer asked.
    REQUIRE(r2.sender->close(10s).isOk());
    CHECK(waitFor([&] { return server.requestFlightRecorderDump("fr", {}, 20, 21) == 2; }));
    for (Rank* r : {&r0, &r1}) CHECK(r->sender->close(10s).isOk());
    CHECK(other.sender->close(10s).isOk());
    server.shutdown();
  }
  store->reset();
  std::filesystem::remove_all(dir);
}
