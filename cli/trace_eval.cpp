#include "cli/trace_eval.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <regex>

#include "cli/argusd_process.h"
#include "cli/diagnosis_query.h"
#include "cli/record_sink.h"
#include "cli/table_printer.h"
#include "import/kineto_reader.h"
#include "import/trace_replay.h"
#include "import/trace_slowdown.h"

namespace argus::cli {

namespace {

namespace fs = std::filesystem;

// The folders holding one job's ranks: at least two rank-N.json.gz files, by name.
std::vector<std::pair<std::string, std::vector<std::string>>> traceSets(const std::string& root) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  std::error_code ec;
  const std::regex rank_file(R"(rank-[0-9]+\.json(\.gz)?)");
  for (const auto& dir : fs::directory_iterator(root, ec)) {
    if (!dir.is_directory(ec)) continue;
    std::vector<std::string> files;
    for (const auto& f : fs::directory_iterator(dir.path(), ec)) {
      if (std::regex_match(f.path().filename().string(), rank_file)) files.push_back(f.path().string());
    }
    std::sort(files.begin(), files.end());
    if (files.size() >= 2) out.emplace_back(dir.path().filename().string(), std::move(files));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Imports `traces` as job `job` into the store at `dir`, rank `slow_rank`'s compute kernels
// slowed by `factor` (1: none). Returns the steps of the first rank.
Result<uint64_t> importJob(const std::string& dir, const std::string& job, const std::vector<import::KinetoTrace>& traces, size_t slow_rank,
                           double factor) {
  SinkOptions so;
  so.job = job;
  so.data_dir = dir;
  Result<std::unique_ptr<RecordSink>> sink = openSink(so);
  if (!sink.isOk()) return sink.status();
  uint64_t steps = 0;
  for (size_t i = 0; i < traces.size(); ++i) {
    const import::KinetoTrace& t = traces[i];
    model::RankTopology topology;
    topology.rank = t.rank.value_or(static_cast<uint32_t>(i));
    topology.world_size = t.world_size;
    std::vector<capture::TraceEvent> events = t.events;
    if (i == slow_rank && factor != 1) import::slowComputeKernels(t.names, factor, events);
    Result<capture::AssemblerStats> stats = replayIntoSink(t.names, events, import::importAssemblerOptions(topology.rank), topology, **sink);
    if (!stats.isOk()) return stats.status();
    if (i == 0) steps = stats->steps_emitted;
  }
  return steps;
}

bool blames(const diagnose::Finding& f, uint32_t rank) {
  return (f.kind == diagnose::FindingKind::kComputeStraggler || f.kind == diagnose::FindingKind::kMaskedStraggler) && f.ranks == std::vector<uint32_t>{rank};
}

std::string fraction(size_t n, size_t d) {
  char b[48];
  std::snprintf(b, sizeof b, "%.0f%% (%zu/%zu)", d == 0 ? 0.0 : 100.0 * static_cast<double>(n) / static_cast<double>(d), n, d);
  return b;
}

}  // namespace

TraceEvalResult runTraceEval(const TraceEvalOptions& o, FILE* out) {
  TraceEvalResult result;
  const auto sets = traceSets(o.kineto_dir);
  if (sets.empty()) {
    std::fprintf(out, "real traces: no folder of rank-N.json.gz files under %s\n", o.kineto_dir.c_str());
    return result;
  }
  const std::string dir = makeTempDir("argus-trace-eval", o.work_dir);
  if (dir.empty()) {
    std::fprintf(stderr, "argus eval: cannot make a folder for the traces' store under %s\n", o.work_dir.empty() ? "the temp dir" : o.work_dir.c_str());
    result.ok = false;
    return result;
  }
  TablePrinter table({"traces", "ranks", "steps", "slowed by", "localized", "blaming another rank", "diagnose() s"});
  std::vector<std::string> clean_notes;
  for (const auto& [name, files] : sets) {
    std::vector<import::KinetoTrace> traces;
    for (const std::string& f : files) {
      Result<import::KinetoTrace> t = import::readKinetoTrace(f);
      if (!t.isOk()) {
        std::fprintf(stderr, "argus eval: %s\n", t.status().toString().c_str());
        result.ok = false;
        break;
      }
      traces.push_back(std::move(t).value());
    }
    if (traces.size() != files.size()) continue;
    // The jobs: as recorded, then each rank slowed by each factor.
    struct Job {
      std::string name;
      size_t rank = 0;
      double factor = 1;
    };
    std::vector<Job> jobs = {{name, 0, 1}};
    // Without a baseline a rank is judged against its peers' median: two ranks have none.
    const bool comparable = traces.size() >= 3;
    for (double f : comparable ? o.factors : std::vector<double>{}) {
      for (size_t r = 0; r < traces.size(); ++r) {
        char b[32];
        std::snprintf(b, sizeof b, "-rank%zu-x%.2f", r, f);
        jobs.push_back({name + b, r, f});
      }
    }
    uint64_t steps = 0;
    Status failed;
    for (const Job& j : jobs) {
      Result<uint64_t> s = importJob(dir, j.name, traces, j.rank, j.factor);
      if (!s.isOk()) {
        failed = s.status().withContext("importing " + j.name);
        break;
      }
      steps = *s;
    }
    Result<std::unique_ptr<QueryTarget>> target = failed.isOk() ? QueryTarget::openData(dir) : Result<std::unique_ptr<QueryTarget>>(failed);
    if (!target.isOk()) {
      std::fprintf(stderr, "argus eval: %s: %s\n", name.c_str(), target.status().toString().c_str());
      result.ok = false;
      continue;
    }
    // Per factor: how often the slowed rank was blamed, and findings against others.
    std::map<double, std::array<size_t, 3>> by_factor;  // localized, misplaced, jobs
    std::map<double, std::string> missed;               // the slowed ranks not blamed
    std::vector<double> secs;
    size_t clean = 0;
    for (const Job& j : jobs) {
      double s = 0;
      Result<std::vector<diagnose::Finding>> found = runDiagnosis(**target, j.name, &s);
      if (!found.isOk()) {
        std::fprintf(stderr, "argus eval: %s: %s\n", j.name.c_str(), found.status().toString().c_str());
        result.ok = false;
        continue;
      }
      secs.push_back(s);
      const uint32_t rank = traces[j.rank].rank.value_or(static_cast<uint32_t>(j.rank));
      if (j.factor == 1) {
        clean += found->size();
        for (const diagnose::Finding& f : *found) clean_notes.push_back(name + " as recorded: " + diagnose::findingKindName(f.kind) + ": " + f.evidence);
        continue;
      }
      auto& tally = by_factor[j.factor];
      ++tally[2];
      ++result.slowed;
      if (std::any_of(found->begin(), found->end(), [&](const diagnose::Finding& f) { return blames(f, rank); })) {
        ++tally[0];
        ++result.localized;
      } else {
        missed[j.factor] += (missed[j.factor].empty() ? "; missed " : ", ") + std::to_string(rank);
      }
      for (const diagnose::Finding& f : *found) {
        if (!f.ranks.empty() && std::find(f.ranks.begin(), f.ranks.end(), rank) == f.ranks.end()) {
          ++tally[1];
          ++result.misplaced;
        }
      }
    }
    std::sort(secs.begin(), secs.end());
    char p50[32];
    std::snprintf(p50, sizeof p50, "%.3f p50", secs.empty() ? 0.0 : secs[secs.size() / 2]);
    table.addRow({name, std::to_string(traces.size()), std::to_string(steps), "- (as recorded)", comparable ? "-" : "- (3 ranks needed)",
                  std::to_string(clean) + " findings in all", p50});
    result.clean_findings += clean;
    for (const auto& [factor, tally] : by_factor) {
      char f[32];
      std::snprintf(f, sizeof f, "%.2fx", factor);
      table.addRow({name, std::to_string(traces.size()), std::to_string(steps), f, fraction(tally[0], tally[2]) + missed[factor], std::to_string(tally[1]), ""});
    }
  }
  removeTree(dir);
  std::fprintf(out, "\nreal traces (%s): each folder imported as recorded, then with one rank's compute kernels slowed\n", o.kineto_dir.c_str());
  table.print(out);
  for (const std::string& n : clean_notes) std::fprintf(out, "  %s\n", n.c_str());
  return result;
}

}  // namespace argus::cli
