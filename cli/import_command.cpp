#include "cli/import_command.h"

#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "cli/record_sink.h"
#include "import/chrome_mapping.h"
#include "import/chrome_reader.h"
#include "import/import_stats.h"
#include "import/kineto_reader.h"
#include "import/trace_replay.h"

namespace argus::cli {

namespace {

struct ImportOptions {
  SinkOptions sink;
  std::optional<uint32_t> rank;  // kineto: every file's rank
  std::string map_file;          // chrome: mapping file read over the defaults
  std::string stats;             // "" or "json"
  bool exact_kernel_totals = false;
  std::vector<std::string> files;
};

// Imports one file into the sink; returns its --stats figures. On failure before any
// record left, nothing of this file was imported.
using FileImporter = std::function<Result<import::ImportStats>(const std::string& path, RecordSink& sink, FILE* log)>;

nlohmann::json statsJson(const import::ImportStats& s) {
  return {{"steps", s.steps},
          {"kernels_per_step", s.perStep(s.kernels)},
          {"raw_bytes_per_step", s.perStep(s.raw_bytes)},
          {"kernel_event_bytes_per_step", s.perStep(s.kernel_event_bytes)},
          {"wire_bytes_per_step", s.perStep(s.wire_bytes)},
          {"steady_wire_bytes_per_step", s.perStep(s.steady_wire_bytes)},
          {"ratio", s.ratio()},
          {"steady_ratio", s.steadyRatio()},
          {"p50_max_rel_error", s.p50_max_rel_error},
          {"p99_max_rel_error", s.p99_max_rel_error},
          {"total_max_abs_error_ns", s.total_max_abs_error_ns},
          {"kernel_total_max_rel_error", s.kernel_total_max_rel_error},
          {"count_mismatches", s.count_mismatches}};
}

struct RankReplay {
  capture::AssemblerStats assembler;
  import::ImportStats stats;  // zero unless figures were asked for
};

// Replays one rank's events through its own assembler into the sink, as one session.
Result<RankReplay> replayRank(bool figures, const capture::NameTable& names, std::span<const capture::TraceEvent> events,
                              const capture::StepAssemblerOptions& options, const model::RankTopology& topology, RecordSink& sink) {
  std::optional<import::StepRecordChecker> checker;
  if (figures) checker.emplace(names, events, options.rules);
  Result<capture::AssemblerStats> replayed = replayIntoSink(names, events, options, topology, sink, [&](const model::StepRecord& r) {
    if (checker) checker->add(r);
  });
  if (!replayed.isOk()) return replayed.status();
  RankReplay out;
  out.assembler = *replayed;
  if (checker) out.stats = checker->finish();
  return out;
}

void noteDropped(FILE* log, const std::string& path, const capture::AssemblerStats& as) {
  uint64_t dropped = as.late_events + as.invalid_events + as.buffer_full;
  if (dropped == 0) return;
  std::fprintf(log, "%s: %llu events dropped (late %llu, invalid %llu, buffer full %llu)\n", path.c_str(), static_cast<unsigned long long>(dropped),
               static_cast<unsigned long long>(as.late_events), static_cast<unsigned long long>(as.invalid_events),
               static_cast<unsigned long long>(as.buffer_full));
}

Result<import::ImportStats> importKinetoFile(const ImportOptions& o, const std::string& path, RecordSink& sink, FILE* log) {
  Result<import::KinetoTrace> trace = import::readKinetoTrace(path);
  if (!trace.isOk()) return trace.status();
  const import::KinetoTrace& t = *trace;
  model::RankTopology topology;
  topology.rank = o.rank.value_or(t.rank.value_or(0));
  topology.world_size = t.world_size;
  if (!o.rank && !t.rank) std::fprintf(log, "%s: no distributedInfo.rank in the trace: importing as rank 0 (use --rank)\n", path.c_str());
  capture::StepAssemblerOptions options = import::importAssemblerOptions(topology.rank);
  options.exact_kernel_totals = o.exact_kernel_totals;
  Result<RankReplay> r = replayRank(!o.stats.empty(), t.names, t.events, options, topology, sink);
  if (!r.isOk()) return r.status();
  const capture::AssemblerStats& as = r->assembler;
  std::string how = as.steps_inferred > 0 ? " (no ProfilerStep markers: " + std::to_string(as.steps_inferred) + " inferred from the repeating kernel sequence)" : "";
  std::fprintf(log, "%s: rank %u, %llu steps%s, %llu kernels (%llu outside steps), %.1f MB JSON -> %s\n", path.c_str(), topology.rank,
               static_cast<unsigned long long>(as.steps_emitted), how.c_str(), static_cast<unsigned long long>(as.kernels),
               static_cast<unsigned long long>(as.outside_steps), static_cast<double>(t.raw_bytes) / 1e6, sink.where().c_str());
  if (as.steps_emitted == 0) {
    std::fprintf(log, "%s: no ProfilerStep#N markers and no repeating kernel sequence to infer steps from: no records\n", path.c_str());
  }
  noteDropped(log, path, as);
  import::ImportStats stats = r->stats;
  stats.raw_bytes = t.raw_bytes;
  stats.kernel_event_bytes = t.kernel_event_bytes;
  return stats;
}

// One line per count worth knowing: where the trace did not say what the importer assumed.
void noteChromeCounts(FILE* log, const std::string& path, const import::ChromeCounts& c) {
  auto note = [&](uint64_t n, const char* what) {
    if (n > 0) std::fprintf(log, "%s: %llu %s\n", path.c_str(), static_cast<unsigned long long>(n), what);
  };
  note(c.without_step, "ops carry no step arg: they count in the step where they begin");
  note(c.crossing, "ops began outside their step's window (the next step had begun): they count where they begin");
  note(c.bad_args, "ops have a step or microbatch arg that is no non-negative integer");
  note(c.skipped, "complete events without a usable ts / dur were skipped");
  note(c.not_read, "events of other phases (B/E, instants, counters, flows) were not read");
}

Result<import::ImportStats> importChromeFile(const ImportOptions& o, const import::ChromeMapping& mapping, const std::string& path,
                                             RecordSink& sink, FILE* log) {
  Result<import::ChromeTrace> trace = import::readChromeTrace(path, mapping);
  if (!trace.isOk()) return trace.status();
  const import::ChromeTrace& t = *trace;
  import::ImportStats stats;
  capture::AssemblerStats total;
  for (const import::ChromeRank& rank : t.ranks) {
    model::RankTopology topology;
    topology.rank = rank.rank;
    capture::StepAssemblerOptions options = import::chromeAssemblerOptions(rank.rank, mapping);
    options.exact_kernel_totals = o.exact_kernel_totals;
    Result<RankReplay> r = replayRank(!o.stats.empty(), t.names, rank.events, options, topology, sink);
    if (!r.isOk()) return r.status().withContext("rank " + std::to_string(rank.rank) + " (the ranks before it are imported)");
    stats.merge(r->stats);
    for (auto [sum, add] : {std::pair{&total.steps_emitted, r->assembler.steps_emitted}, {&total.kernels, r->assembler.kernels},
                            {&total.outside_steps, r->assembler.outside_steps}, {&total.late_events, r->assembler.late_events},
                            {&total.invalid_events, r->assembler.invalid_events}, {&total.buffer_full, r->assembler.buffer_full}}) {
      *sum += add;
    }
  }
  std::string ranks = t.ranks.size() == 1 ? "rank " + std::to_string(t.ranks.front().rank)
                                          : std::to_string(t.ranks.size()) + " ranks (" + std::to_string(t.ranks.front().rank) + ".." +
                                                std::to_string(t.ranks.back().rank) + ")";
  std::fprintf(log, "%s: %s, %llu steps, %llu ops, %llu collectives (%llu outside steps), %.1f MB JSON -> %s\n", path.c_str(), ranks.c_str(),
               static_cast<unsigned long long>(total.steps_emitted), static_cast<unsigned long long>(total.kernels),
               static_cast<unsigned long long>(t.counts.collectives), static_cast<unsigned long long>(total.outside_steps),
               static_cast<double>(t.raw_bytes) / 1e6, sink.where().c_str());
  noteChromeCounts(log, path, t.counts);
  noteDropped(log, path, total);
  stats.raw_bytes = t.raw_bytes;
  stats.kernel_event_bytes = t.op_event_bytes;
  return stats;
}

// Notices steps that an earlier file of this run imported for the same rank: the later
// file's records replace them (the store keeps the latest delivery of a step), which is
// what a re-import wants but a silent surprise when two traces of one rank overlap.
class OverlapNoticingSink final : public RecordSink {
 public:
  explicit OverlapNoticingSink(RecordSink& inner) : inner_(inner) {}
  // Starts the next file; reports the previous one's overlaps to `log`.
  void startFile(const std::string& path, FILE* log) {
    report(log);
    file_ = path;
  }
  void report(FILE* log) {
    for (const auto& [key, n] : overlaps_) {
      std::fprintf(log, "%s: %llu steps of rank %u were already imported from %s in this run: these records replace them\n", file_.c_str(),
                   static_cast<unsigned long long>(n), key.first, key.second.c_str());
    }
    overlaps_.clear();
  }
  Status begin(const model::RankTopology& topology) override {
    rank_ = topology.rank;
    return inner_.begin(topology);
  }
  Status add(const capture::StepOutput& out) override {
    auto [it, inserted] = steps_.emplace(std::tuple{rank_, out.record.step, out.record.attempt}, file_);
    if (!inserted && it->second != file_) ++overlaps_[{rank_, it->second}];
    it->second = file_;
    return inner_.add(out);
  }
  Status end() override { return inner_.end(); }
  std::string where() const override { return inner_.where(); }

 private:
  RecordSink& inner_;
  std::string file_;
  uint32_t rank_ = 0;
  std::map<std::tuple<uint32_t, uint64_t, uint16_t>, std::string> steps_;  // (rank, step, attempt) -> file
  std::map<std::pair<uint32_t, std::string>, uint64_t> overlaps_;           // (rank, earlier file) -> steps
};

int runImport(const ImportOptions& o, const FileImporter& importFile) {
  if (!model::isValidJobId(o.sink.job)) {
    std::fprintf(stderr, "argus import: --job '%s': 1-128 characters of [A-Za-z0-9._-]\n", o.sink.job.c_str());
    return 1;
  }
  auto sink = openSink(o.sink);
  if (!sink.isOk()) {
    std::fprintf(stderr, "argus import: %s\n", sink.status().message().c_str());
    return 1;
  }
  // With --stats json stdout carries the JSON alone; progress goes to stderr.
  FILE* log = o.stats.empty() ? stdout : stderr;
  nlohmann::json files = nlohmann::json::array();
  import::ImportStats total;
  size_t failed = 0;
  OverlapNoticingSink overlaps(**sink);
  for (const std::string& path : o.files) {
    overlaps.startFile(path, stderr);
    Result<import::ImportStats> r = importFile(path, overlaps, log);
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
  overlaps.report(stderr);
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

// The options every importer takes.
void addCommonOptions(CLI::App* cmd, ImportOptions* o) {
  cmd->add_option("--job", o->sink.job, "job id")->required();
  cmd->add_option("--server", o->sink.server, "argusd ingest address HOST:PORT");
  cmd->add_option("--data", o->sink.data_dir, "data directory to write into (argusd must not be running on it)");
  cmd->add_option("--token", o->sink.token, "auth token for argusd");
  cmd->add_option("--stats", o->stats, "print compression and accuracy figures")->check(CLI::IsMember({"json"}));
  cmd->add_flag("--exact-kernel-totals", o->exact_kernel_totals,
                "keep per-kernel totals exact (default: the histogram's sketch total, within 1% and free on the wire)");
  cmd->add_option("files", o->files, "trace files (.json or .json.gz)")->required();
}

}  // namespace

void addImportCommand(CLI::App& app, int* exit_code) {
  CLI::App* import_cmd = app.add_subcommand("import", "Replay existing traces through the step assembler into argusd or a data dir");
  import_cmd->require_subcommand(1);

  auto k = std::make_shared<ImportOptions>();
  CLI::App* kineto = import_cmd->add_subcommand("kineto", "PyTorch profiler (Kineto) Chrome-trace JSON, plain or gzipped");
  addCommonOptions(kineto, k.get());
  kineto->add_option("--rank", k->rank, "rank of every file's records (default: the trace's distributedInfo.rank)");
  kineto->callback([k, exit_code] {
    *exit_code = runImport(*k, [k](const std::string& path, RecordSink& sink, FILE* log) { return importKinetoFile(*k, path, sink, log); });
  });

  auto c = std::make_shared<ImportOptions>();
  CLI::App* chrome = import_cmd->add_subcommand(
      "chrome", "generic Chrome-trace JSON of op-level timelines (steps and microbatches in args; Megatron names by default)");
  addCommonOptions(chrome, c.get());
  chrome->add_option("--map", c->map_file, "mapping file read over the built-in Megatron-style mapping (docs/import/chrome.md)");
  chrome->callback([c, exit_code] {
    Result<import::ChromeMapping> mapping = c->map_file.empty() ? import::ChromeMapping::defaults() : import::ChromeMapping::load(c->map_file);
    if (!mapping.isOk()) {
      std::fprintf(stderr, "argus import: %s\n", mapping.status().message().c_str());
      *exit_code = 1;
      return;
    }
    auto m = std::make_shared<import::ChromeMapping>(std::move(mapping).value());
    *exit_code = runImport(*c, [c, m](const std::string& path, RecordSink& sink, FILE* log) { return importChromeFile(*c, *m, path, sink, log); });
  });
}

}  // namespace argus::cli
