#include "cli/cluster_sink.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "storage/store.h"
#include "wire/step_sender.h"
#include "wire/tcp.h"

namespace argus::cli {

namespace {

class ServerClusterSink : public ClusterSink {
 public:
  ServerClusterSink(const std::string& host, uint16_t port, const SinkOptions& o, const simulate::ClusterSimulator& sim) : where_(o.server) {
    for (uint32_t rank = 0; rank < sim.layout().ranks(); ++rank) {
      wire::StepSenderOptions so;
      so.host = host;
      so.port = port;
      so.job = o.job;
      so.auth_token = o.token;
      so.topology = sim.layout().topology(rank);
      so.client = "argus-simulate/0.1";
      // A simulator outruns ingest: wait for room rather than fail, in buffers that hold
      // 1 GiB over all ranks (a 10,000-rank job at 16 MiB each would be 160 GiB).
      so.send_timeout = std::chrono::seconds(60);
      so.max_buffered_bytes = std::clamp<size_t>((size_t{1} << 30) / sim.layout().ranks(), size_t{256} << 10, size_t{16} << 20);
      auto sender = std::make_unique<wire::StepSender>(so);
      sender->addKernels(sim.kernels());
      sender->addStacks(sim.stacks());
      sender->addStrings(sim.strings());
      senders_.push_back(std::move(sender));
    }
  }
  Status write(uint32_t rank, std::span<const model::StepRecord> records) override {
    for (const model::StepRecord& r : records) {
      if (Status s = senders_[rank]->send(r); !s.isOk()) return s.withContext("rank " + std::to_string(rank) + ", argusd at " + where_);
    }
    return Status::ok();
  }
  Status blockDone() override { return Status::ok(); }
  Status finish() override {
    Status first;
    for (size_t rank = 0; rank < senders_.size(); ++rank) {
      Status s = senders_[rank]->close(std::chrono::seconds(120));
      if (!s.isOk() && first.isOk()) first = s.withContext("rank " + std::to_string(rank) + ": argusd at " + where_ + " did not acknowledge every record");
    }
    senders_.clear();
    return first;
  }
  std::string where() const override { return "argusd at " + where_; }

 private:
  std::string where_;
  std::vector<std::unique_ptr<wire::StepSender>> senders_;
};

class StoreClusterSink : public ClusterSink {
 public:
  StoreClusterSink(std::unique_ptr<storage::Store> store, storage::JobId job, std::string dir, const simulate::ClusterSimulator& sim)
      : store_(std::move(store)), job_(job), dir_(std::move(dir)), sim_(sim), started_(sim.layout().ranks(), false) {}
  ~StoreClusterSink() override {
    if (store_) store_->sealAll();
  }
  Status write(uint32_t rank, std::span<const model::StepRecord> records) override {
    storage::WriteRequest request;
    request.job = job_;
    model::RankTopology topology;
    if (!started_[rank]) {  // a rank's first write: where it sits, and the dictionaries
      topology = sim_.layout().topology(rank);
      request.topology = &topology;
      request.kernels = sim_.kernels();
      request.stacks = sim_.stacks();
      request.strings = sim_.strings();
      started_[rank] = true;
    }
    request.records = records;
    return store_->write(request);
  }
  Status blockDone() override { return store_->sealReady(); }
  Status finish() override {
    Status s = store_->sealAll();
    store_.reset();
    return s;
  }
  std::string where() const override { return dir_; }

 private:
  std::unique_ptr<storage::Store> store_;
  storage::JobId job_;
  std::string dir_;
  const simulate::ClusterSimulator& sim_;
  std::vector<char> started_;  // per rank; char, not bool: ranks are written from several threads
};

// Builds every rank's records of the simulated block on `threads` threads and writes them.
Status writeBlock(const simulate::ClusterSimulator& sim, ClusterSink& sink, unsigned threads) {
  const uint32_t ranks = sim.layout().ranks();
  std::atomic<uint32_t> next{0};
  std::vector<Status> failed(threads);
  auto work = [&](unsigned t) {
    std::vector<model::StepRecord> records(sim.blockSteps());
    for (uint32_t rank; (rank = next.fetch_add(1)) < ranks;) {
      for (uint32_t i = 0; i < sim.blockSteps(); ++i) sim.record(rank, i, &records[i]);
      if (Status s = sink.write(rank, records); !s.isOk()) {
        failed[t] = s;
        next = ranks;
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (std::thread& th : pool) th.join();
  for (const Status& s : failed) ARGUS_RETURN_IF_ERROR(s);
  return sink.blockDone();
}

}  // namespace

Status runSimulation(simulate::ClusterSimulator& sim, ClusterSink& sink, uint64_t steps, uint32_t block, unsigned threads, double steps_per_second) {
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t done = 0; done < steps;) {
    const auto n = static_cast<uint32_t>(std::min<uint64_t>(block, steps - done));
    if (steps_per_second > 0) std::this_thread::sleep_until(start + std::chrono::duration<double>(static_cast<double>(done + n) / steps_per_second));
    sim.simulate(n);
    ARGUS_RETURN_IF_ERROR(writeBlock(sim, sink, threads));
    done += n;
  }
  return sink.finish();
}

Result<std::unique_ptr<ClusterSink>> openClusterSink(const SinkOptions& o, const simulate::ClusterSimulator& sim) {
  if (o.server.empty() == o.data_dir.empty()) return Status::invalidArgument("give exactly one of --server HOST:PORT and --data DIR");
  if (!o.server.empty()) {
    std::string host;
    uint16_t port = 0;
    ARGUS_RETURN_IF_ERROR(wire::parseHostPort(o.server, &host, &port).withContext("--server"));
    return std::unique_ptr<ClusterSink>(new ServerClusterSink(host, port, o, sim));
  }
  storage::StoreOptions so;
  so.sync_wal = false;  // records that can be made again: no fsync per write (a crash of this process keeps them)
  auto store = storage::Store::open(o.data_dir, so);
  if (!store.isOk()) return store.status().withContext("cannot open data dir " + o.data_dir + " (is argusd running on it? then use --server)");
  auto job = (*store)->ensureJob(o.job);
  if (!job.isOk()) return job.status().withContext("job " + o.job);
  return std::unique_ptr<ClusterSink>(new StoreClusterSink(std::move(store).value(), *job, o.data_dir, sim));
}

}  // namespace argus::cli
