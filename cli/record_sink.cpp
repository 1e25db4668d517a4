#include "cli/record_sink.h"

#include <chrono>
#include <cstdlib>
#include <vector>

#include "import/trace_replay.h"
#include "storage/store.h"
#include "wire/step_sender.h"

namespace argus::cli {

namespace {

class ServerSink : public RecordSink {
 public:
  ServerSink(std::string host, uint16_t port, std::string job, std::string token)
      : host_(std::move(host)), port_(port), job_(std::move(job)), token_(std::move(token)) {}
  Status begin(const model::RankTopology& topology) override {
    wire::StepSenderOptions o;
    o.host = host_;
    o.port = port_;
    o.job = job_;
    o.auth_token = token_;
    o.topology = topology;
    o.client = "argus-import/0.1";
    o.send_timeout = std::chrono::seconds(30);
    sender_ = std::make_unique<wire::StepSender>(o);
    failed_ = Status::ok();
    return Status::ok();
  }
  Status add(const capture::StepOutput& out) override {
    if (!failed_.isOk()) return failed_;
    sender_->addKernels(out.new_kernels);
    sender_->addStrings(out.new_strings);
    failed_ = sender_->send(out.record);
    return failed_;
  }
  Status end() override {
    Status s = sender_->close(std::chrono::seconds(60));
    sender_.reset();
    if (!failed_.isOk()) return failed_;
    if (!s.isOk()) return s.withContext("argusd at " + where() + " did not acknowledge every record");
    return s;
  }
  std::string where() const override { return host_ + ":" + std::to_string(port_); }

 private:
  std::string host_;
  uint16_t port_;
  std::string job_, token_;
  std::unique_ptr<wire::StepSender> sender_;
  Status failed_;
};

class StoreSink : public RecordSink {
 public:
  StoreSink(std::unique_ptr<storage::Store> store, storage::JobId job, std::string dir)
      : store_(std::move(store)), job_(job), dir_(std::move(dir)) {}
  ~StoreSink() override {
    if (store_) store_->sealAll();
  }
  Status begin(const model::RankTopology& topology) override {
    topology_ = topology;
    records_.clear(), kernels_.clear(), strings_.clear();
    return Status::ok();
  }
  Status add(const capture::StepOutput& out) override {
    records_.push_back(out.record);
    kernels_.insert(kernels_.end(), out.new_kernels.begin(), out.new_kernels.end());
    strings_.insert(strings_.end(), out.new_strings.begin(), out.new_strings.end());
    return Status::ok();
  }
  Status end() override {
    storage::WriteRequest request;
    request.job = job_;
    request.topology = &topology_;
    request.kernels = kernels_;
    request.strings = strings_;
    request.records = records_;
    ARGUS_RETURN_IF_ERROR(store_->write(request));
    return store_->sealAll();
  }
  std::string where() const override { return dir_; }

 private:
  std::unique_ptr<storage::Store> store_;
  storage::JobId job_;
  std::string dir_;
  model::RankTopology topology_;
  std::vector<model::StepRecord> records_;
  std::vector<model::KernelDictEntry> kernels_;
  std::vector<model::StringDictEntry> strings_;
};

}  // namespace

Result<std::unique_ptr<RecordSink>> openSink(const SinkOptions& o) {
  if (o.server.empty() == o.data_dir.empty()) return Status::invalidArgument("give exactly one of --server HOST:PORT and --data DIR");
  if (!o.server.empty()) {
    size_t colon = o.server.rfind(':');
    unsigned long port = 0;
    if (colon != std::string::npos) port = std::strtoul(o.server.c_str() + colon + 1, nullptr, 10);
    if (colon == std::string::npos || colon == 0 || port == 0 || port > 65535) {
      return Status::invalidArgument("--server " + o.server + ": expected HOST:PORT, e.g. 127.0.0.1:7070");
    }
    return std::unique_ptr<RecordSink>(new ServerSink(o.server.substr(0, colon), static_cast<uint16_t>(port), o.job, o.token));
  }
  auto store = storage::Store::open(o.data_dir);
  if (!store.isOk()) return store.status().withContext("cannot open data dir " + o.data_dir + " (is argusd running on it? then use --server)");
  auto job = (*store)->ensureJob(o.job);
  if (!job.isOk()) return job.status().withContext("job " + o.job);
  return std::unique_ptr<RecordSink>(new StoreSink(std::move(store).value(), *job, o.data_dir));
}

Result<capture::AssemblerStats> replayIntoSink(const capture::NameTable& names, std::span<const capture::TraceEvent> events,
                                               const capture::StepAssemblerOptions& options, const model::RankTopology& topology, RecordSink& sink,
                                               const std::function<void(const model::StepRecord&)>& each) {
  ARGUS_RETURN_IF_ERROR(sink.begin(topology));
  Status failed;
  const capture::AssemblerStats stats = import::replayTrace(names, events, options, [&](const capture::StepOutput& step) {
    if (each) each(step.record);
    if (failed.isOk()) failed = sink.add(step);
  });
  Status durable = sink.end();
  if (!failed.isOk()) return failed;
  if (!durable.isOk()) return durable;
  return stats;
}

}  // namespace argus::cli
