#include "cli/import_command.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "import/import_stats.h"
#include "import/kineto_reader.h"
#include "import/trace_replay.h"
#include "storage/store.h"
#include "wire/step_sender.h"

namespace argus::cli {

namespace {

struct ImportOptions {
  std::string job;
  std::string server;  // HOST:PORT
  std::string data_dir;
  std::optional<uint32_t> rank;
  std::string token;
  std::string stats;   // "" or "json"
  std::vector<std::string> files;
};

// Where records go: argusd over the wire, or a data directory opened here.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual Status begin(const model::RankTopology& topology) = 0;
  virtual Status add(const capture::StepOutput& out) = 0;
  // Makes the file's records durable (acked by argusd / written to the store).
  virtual Status end() = 0;
  virtual std::string where() const = 0;
};

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

Result<std::unique_ptr<RecordSink>> openSink(const ImportOptions& o) {
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

nlohmann::json statsJson(const import::ImportStats& s) {
  return {{"steps", s.steps},
          {"kernels_per_step", s.perStep(s.kernels)},
          {"raw_bytes_per_step", s.perStep(s.raw_bytes)},
          {"kernel_event_bytes_per_step", s.perStep(s.kernel_event_bytes)},
          {"wire_bytes_per_step", s.perStep(s.wire_bytes)},
          {"ratio", s.ratio()},
          {"p50_max_rel_error", s.p50_max_rel_error},
          {"p99_max_rel_error", s.p99_max_rel_error},
          {"total_max_abs_error_ns", s.total_max_abs_error_ns},
          {"count_mismatches", s.count_mismatches}};
}

// Imports one file. Returns its stats; on failure nothing of this file was sent.
Result<import::ImportStats> importFile(const ImportOptions& o, const std::string& path, RecordSink& sink, FILE* log) {
  Result<import::KinetoTrace> trace = import::readKinetoTrace(path);
  if (!trace.isOk()) return trace.status();
  const import::KinetoTrace& t = *trace;
  model::RankTopology topology;
  topology.rank = o.rank.value_or(t.rank.value_or(0));
  topology.world_size = t.world_size;
  if (!o.rank && !t.rank) std::fprintf(log, "%s: no distributedInfo.rank in the trace: importing as rank 0 (use --rank)\n", path.c_str());
  ARGUS_RETURN_IF_ERROR(sink.begin(topology));
  import::StepRecordChecker checker(t);
  Status failed;
  capture::AssemblerStats as = import::replayTrace(t, import::importAssemblerOptions(topology.rank), [&](const capture::StepOutput& out) {
    if (!o.stats.empty()) checker.add(out.record);
    if (failed.isOk()) failed = sink.add(out);
  });
  Status durable = sink.end();
  if (!failed.isOk()) return failed;
  if (!durable.isOk()) return durable;
  import::ImportStats stats = checker.finish();
  std::string how = as.steps_inferred > 0 ? " (no ProfilerStep markers: " + std::to_string(as.steps_inferred) + " inferred from the repeating kernel sequence)" : "";
  std::fprintf(log, "%s: rank %u, %llu steps%s, %llu kernels (%llu outside steps), %.1f MB JSON -> %s\n", path.c_str(), topology.rank,
               static_cast<unsigned long long>(as.steps_emitted), how.c_str(), static_cast<unsigned long long>(as.kernels),
               static_cast<unsigned long long>(as.outside_steps), static_cast<double>(t.raw_bytes) / 1e6, sink.where().c_str());
  if (as.steps_emitted == 0) {
    std::fprintf(log, "%s: no ProfilerStep#N markers and no repeating kernel sequence to infer steps from: no records\n", path.c_str());
  }
  uint64_t dropped = as.late_events + as.invalid_events + as.buffer_full;
  if (dropped > 0) {
    std::fprintf(log, "%s: %llu events dropped (late %llu, invalid %llu, buffer full %llu)\n", path.c_str(), static_cast<unsigned long long>(dropped),
                 static_cast<unsigned long long>(as.late_events), static_cast<unsigned long long>(as.invalid_events),
                 static_cast<unsigned long long>(as.buffer_full));
  }
  return stats;
}

int runImportKineto(const ImportOptions& o) {
  if (!model::isValidJobId(o.job)) {
    std::fprintf(stderr, "argus import: --job '%s': 1-128 characters of [A-Za-z0-9._-]\n", o.job.c_str());
    return 1;
  }
  auto sink = openSink(o);
  if (!sink.isOk()) {
    std::fprintf(stderr, "argus import: %s\n", sink.status().message().c_str());
    return 1;
  }
  // With --stats json stdout carries the JSON alone; progress goes to stderr.
  FILE* log = o.stats.empty() ? stdout : stderr;
  nlohmann::json files = nlohmann::json::array();
  import::ImportStats total;
  size_t failed = 0;
  for (const std::string& path : o.files) {
    Result<import::ImportStats> r = importFile(o, path, **sink, log);
    if (!r.isOk()) {
      ++failed;
      std::fprintf(stderr, "argus import: %s\n", r.status().message().c_str());
      continue;
    }
    total.merge(*r);
    nlohmann::json entry = statsJson(*r);
    entry["file"] = path;
    files.push_back(entry);
  }
  sink->reset();  // a store seals and closes here
  if (!o.stats.empty()) std::printf("%s\n", nlohmann::json{{"files", files}, {"total", statsJson(total)}}.dump(2).c_str());
  if (failed > 0) {
    if (failed == o.files.size()) {
      std::fprintf(stderr, "argus import: %s failed: nothing imported\n", failed == 1 ? "the file" : "every file");
    } else {
      std::fprintf(stderr, "argus import: %zu of %zu files failed (the others are imported)\n", failed, o.files.size());
    }
    return 1;
  }
  return 0;
}

}  // namespace

void addImportCommand(CLI::App& app, int* exit_code) {
  CLI::App* import_cmd = app.add_subcommand("import", "Replay existing traces through the step assembler into argusd or a data dir");
  import_cmd->require_subcommand(1);
  auto o = std::make_shared<ImportOptions>();
  CLI::App* kineto = import_cmd->add_subcommand("kineto", "PyTorch profiler (Kineto) Chrome-trace JSON, plain or gzipped");
  kineto->add_option("--job", o->job, "job id")->required();
  kineto->add_option("--server", o->server, "argusd ingest address HOST:PORT");
  kineto->add_option("--data", o->data_dir, "data directory to write into (argusd must not be running on it)");
  kineto->add_option("--rank", o->rank, "rank of every file's records (default: the trace's distributedInfo.rank)");
  kineto->add_option("--token", o->token, "auth token for argusd");
  kineto->add_option("--stats", o->stats, "print compression and accuracy figures")->check(CLI::IsMember({"json"}));
  kineto->add_option("files", o->files, "trace files (.json or .json.gz)")->required();
  kineto->callback([o, exit_code] { *exit_code = runImportKineto(*o); });
}

}  // namespace argus::cli
