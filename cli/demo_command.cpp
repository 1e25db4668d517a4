#include "cli/demo_command.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli/argusd_process.h"
#include "cli/cluster_sink.h"
#include "cli/diagnosis_query.h"
#include "cli/duration_text.h"
#include "cli/fault_matching.h"
#include "cli/query_target.h"
#include "cli/table_printer.h"
#include "cli/text_chart.h"
#include "cli/trace_kernel_mix.h"
#include "simulate/cluster_simulator.h"

namespace argus::cli {

namespace {

using Json = nlohmann::json;

struct DemoOptions {
  uint32_t ranks = 1024;
  uint64_t steps = 300;
  uint64_t seed = 1;
  std::string keep_dir;
};

constexpr const char* kJob = "demo";

// The argusd next to this binary, unless ARGUSD_BIN says otherwise.
std::string siblingArgusd() {
  if (const char* bin = std::getenv("ARGUSD_BIN"); bin != nullptr && *bin != '\0') return bin;
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "argusd";
  return (self.parent_path() / "argusd").string();
}

Result<std::unique_ptr<simulate::ClusterSimulator>> makeSimulator(const DemoOptions& o) {
  simulate::ClusterOptions c;
  c.layout = simulate::ClusterLayout{8, 4, o.ranks / 32, 8};
  c.seed = o.seed;
  c.checkpoint_every = 100;
  c.faults = simulate::staggeredFaults(60, o.steps - 10);  // after the warm-up and a first baseline
  Result<simulate::KernelMix> mix = defaultKernelMix(64);
  if (!mix.isOk()) return mix.status();
  return simulate::ClusterSimulator::create(c, std::move(mix).value());
}

// Runs `sql` on argusd (`target`: its POST /api/v1/query); the answer's rows.
Result<Json> query(QueryTarget& target, const std::string& sql) {
  Result<std::string> answer = target.answerJson(sql, query::QueryOptions{});
  if (!answer.isOk()) return answer.status();
  Json body = Json::parse(*answer, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.contains("rows")) return Status::corruption("POST /api/v1/query: the answer has no rows");
  return body["rows"];
}

// A numeric cell (NULL as 0): uint64 ids travel as decimal strings, other numbers as numbers.
double num(const Json& cell) {
  if (cell.is_null()) return 0;
  return cell.is_string() ? std::stod(cell.get<std::string>()) : cell.get<double>();
}

// The query, as a person would type it into `argus shell`, above its answer (indented).
void printQuery(const std::string& title, const std::string& sql) {
  std::printf("\n%s:\n", title.c_str());
  for (size_t at = 0; at < sql.size();) {
    size_t end = std::min(sql.find('\n', at), sql.size());
    std::printf("  %s\n", sql.substr(at, end - at).c_str());
    at = end + 1;
  }
  std::printf("\n");
}

// `width` columns of text, indented, broken at spaces.
void printWrapped(const std::string& s, const char* indent, size_t width = 96) {
  size_t at = 0;
  while (at < s.size()) {
    size_t end = std::min(s.size(), at + width);
    if (end < s.size()) {
      const size_t space = s.rfind(' ', end);
      if (space != std::string::npos && space > at) end = space;
    }
    std::printf("%s%s\n", indent, s.substr(at, end - at).c_str());
    at = end + (end < s.size() && s[end] == ' ' ? 1 : 0);
  }
}

// The slowest and the median rank's step time per step, as two sparklines on one scale: when
// the run slowed down, and whether all ranks did or a few.
Status printStepChart(QueryTarget& argusd) {
  const std::string per_step = std::string("SELECT step, max(iter_ns) AS slowest, median(iter_ns) AS typical\nFROM steps WHERE job = '") + kJob +
                               "' GROUP BY step ORDER BY step";
  Result<Json> rows = query(argusd, per_step);
  if (!rows.isOk()) return rows.status();
  if (rows->empty()) return Status::notFound("no steps stored for job 'demo'");
  std::vector<double> slowest, typical;
  for (const Json& r : *rows) slowest.push_back(num(r[1])), typical.push_back(num(r[2]));
  constexpr size_t kWidth = 75;
  const size_t per_column = columnRun(slowest.size(), kWidth);
  slowest = foldColumns(slowest, kWidth, Fold::kMax);
  typical = foldColumns(typical, kWidth, Fold::kMean);
  const double lo = std::min(*std::min_element(slowest.begin(), slowest.end()), *std::min_element(typical.begin(), typical.end()));
  // The top of the scale at the slowest column within twice the median: warm-up and
  // checkpoint spikes clip at the top instead of flattening the faults' plateaus.
  std::vector<double> sorted = slowest;
  std::sort(sorted.begin(), sorted.end());
  double hi = lo;
  for (double v : sorted) {
    if (v <= 2 * sorted[sorted.size() / 2]) hi = v;
  }
  const std::string first = std::to_string(static_cast<int64_t>(num(rows->front()[0])));
  const std::string last = std::to_string(static_cast<int64_t>(num(rows->back()[0])));
  printQuery("Step time across ranks, steps " + first + "-" + last, per_step);
  std::printf("  slowest rank  %s\n  median rank   %s\n", sparkline(slowest, lo, hi).c_str(), sparkline(typical, lo, hi).c_str());
  std::printf("  (one column per %s; %s at the bottom, %s and above at the top)\n", per_column == 1 ? "step" : (std::to_string(per_column) + " steps").c_str(),
              formatDurationNs(lo).c_str(), formatDurationNs(hi).c_str());
  return Status::ok();
}

std::string where(const diagnose::Finding& f) {
  if (!f.link.empty()) return "link " + f.link;
  std::string s;
  if (!f.ranks.empty()) s = (f.ranks.size() == 1 ? "rank " : "ranks ") + diagnose::rankList(f.ranks);
  if (f.pp_rank) s += (s.empty() ? "stage " : " (stage ") + std::to_string(*f.pp_rank) + (s.empty() ? "" : ")");
  return s;
}

std::string faultWhere(const simulate::Fault& f) {
  if (f.rank) return "rank " + std::to_string(*f.rank);
  if (f.stage) return "stage " + std::to_string(*f.stage);
  return "link " + simulate::ClusterLayout::hostName(f.hosts->first) + "/" + simulate::ClusterLayout::hostName(f.hosts->second);
}

// The diagnosis as a user runs it, its findings for a person, then each injected fault
// against them. Returns whether every fault was found and placed.
Result<bool> printDiagnosis(QueryTarget& argusd, const simulate::ClusterSimulator& sim, uint64_t steps) {
  double secs = 0;
  Result<std::vector<diagnose::Finding>> found = runDiagnosis(argusd, kJob, &secs);
  if (!found.isOk()) return found.status();
  const std::vector<diagnose::Finding>& findings = *found;
  printQuery("Diagnosis (anomalous windows, then the ranks, stages, links, stalls and kernels to blame)", diagnosisQuery(kJob));
  std::printf("  %zu findings in %.2f s:\n\n", findings.size(), secs);
  for (size_t i = 0; i < findings.size(); ++i) {
    const diagnose::Finding& f = findings[i];
    std::printf("  %zu. %s, steps %llu-%llu: %s%s%s  (slowdown %+.0f%%, confidence %.2f)\n", i + 1, diagnose::findingKindName(f.kind),
                static_cast<unsigned long long>(f.from_step), static_cast<unsigned long long>(f.to_step), where(f).c_str(), f.kernel.empty() ? "" : " kernel ",
                f.kernel.empty() ? "" : diagnose::shortKernelName(f.kernel).c_str(), f.slowdown * 100, f.confidence);
    printWrapped(f.evidence, "       ");
  }
  std::printf("\nAgainst the faults the simulator injected (its ground truth):\n\n");
  TablePrinter table({"injected", "steps", "where", "found", "steps after onset"});
  bool all = true;
  for (const simulate::Fault& f : sim.faults()) {
    const FaultMatch m = matchFault(f, steps - 1, findings);
    all = all && m.localized;
    const uint64_t end = std::min(steps - 1, f.from_step + f.steps - 1);
    table.addRow({simulate::faultKindName(f.kind), std::to_string(f.from_step) + "-" + std::to_string(end), faultWhere(f),
                  m.finding == nullptr ? "MISSED" : m.localized ? "yes, placed" : "found, misplaced (" + where(*m.finding) + ")",
                  m.finding == nullptr ? "" : std::to_string(m.latency_steps)});
  }
  table.print(stdout);
  return all;
}

int runDemo(const DemoOptions& o) {
  Result<std::unique_ptr<simulate::ClusterSimulator>> made = makeSimulator(o);
  if (!made.isOk()) {
    std::fprintf(stderr, "argus demo: %s\n", made.status().toString().c_str());
    return 1;
  }
  simulate::ClusterSimulator& sim = **made;
  // The data stays for the shell and Grafana afterwards: in --keep DIR, else a fresh one.
  std::string keep = o.keep_dir;
  if (keep.empty()) keep = makeTempDir("argus-demo");
  cli::ArgusdProcess argusd(keep);
  argusd.setHttp(true);
  setenv("ARGUSD_BIN", siblingArgusd().c_str(), /*overwrite=*/0);
  if (Status s = argusd.start(); !s.isOk()) {
    std::fprintf(stderr, "argus demo: cannot start argusd: %s\n", s.toString().c_str());
    return 1;
  }
  const simulate::ClusterLayout& l = sim.layout();
  std::printf("argusd is up: data %s, ingest 127.0.0.1:%u, http 127.0.0.1:%u\n", argusd.dataDir().c_str(), argusd.ingestPort(), argusd.httpPort());
  std::printf("Simulating job '%s': %u ranks (tensor-parallel %u x pipeline %u x data-parallel %u on %u hosts), %llu steps of %u microbatches,\n"
              "kernels from %s (%zu signatures), a checkpoint every 100 steps. Injected, one at a time:\n",
              kJob, l.ranks(), l.tp, l.pp, l.dp, l.hosts(), static_cast<unsigned long long>(o.steps), sim.options().microbatches, sim.mix().source.c_str(),
              sim.mix().kernels.size());
  for (const simulate::Fault& f : sim.faults()) {
    std::printf("  %-18s on %-24s from step %llu for %llu steps\n", simulate::faultKindName(f.kind), faultWhere(f).c_str(),
                static_cast<unsigned long long>(f.from_step), static_cast<unsigned long long>(f.steps));
  }
  std::printf("Streaming every rank over the wire protocol, one session per rank...\n");
  std::fflush(stdout);
  SinkOptions so;
  so.job = kJob;
  so.server = "127.0.0.1:" + std::to_string(argusd.ingestPort());
  const auto t0 = std::chrono::steady_clock::now();
  Result<std::unique_ptr<ClusterSink>> sink = openClusterSink(so, sim);
  Status sent = sink.isOk() ? runSimulation(sim, **sink, o.steps, 32, std::max(1u, std::thread::hardware_concurrency())) : sink.status();
  if (!sent.isOk()) {
    std::fprintf(stderr, "argus demo: sending failed: %s\n", sent.toString().c_str());
    return 1;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double records = static_cast<double>(l.ranks()) * static_cast<double>(o.steps);
  std::printf("%.0f step records acknowledged durable in %.1f s (%.0f rank-steps/s).\n", records, secs, records / secs);

  bool all_found = false;
  Status shown = [&]() -> Status {
    Result<std::unique_ptr<QueryTarget>> target = QueryTarget::connect("127.0.0.1:" + std::to_string(argusd.httpPort()));
    if (!target.isOk()) return target.status();
    ARGUS_RETURN_IF_ERROR(printStepChart(**target));
    Result<bool> found = printDiagnosis(**target, sim, o.steps);
    if (!found.isOk()) return found.status();
    all_found = *found;
    return Status::ok();
  }();
  if (!shown.isOk()) std::fprintf(stderr, "argus demo: query failed: %s\n", shown.toString().c_str());

  // argusd seals what it holds before it exits: a block of every rank can take half a minute
  // on a busy 2-core machine, more than ArgusdProcess's default wait.
  std::printf("\nStopping argusd (it seals the steps it holds first)...\n");
  std::fflush(stdout);
  const int rc = argusd.stop(std::chrono::minutes(3));
  std::printf("argusd stopped (exit %d).\n", rc);
  const std::string dir = argusd.dataDir();
  const char* data = dir.c_str();
  std::printf("The data stays in %s. Ask it more in SQL (\\tables lists the tables, docs/query/language.md the language):\n"
              "  argus shell --data %s\n"
              "  argus> SELECT * FROM degraded_kernels('demo', rank => R, from_step => A, to_step => B);\n"
              "Or serve it again for the HTTP API and the Grafana dashboard (grafana/, docs/http/grafana.md):\n"
              "  argusd --data %s --ingest 127.0.0.1:0 --http 127.0.0.1:7080\n"
              "  then provision grafana/provisioning into Grafana and open the \"Argus job overview\" dashboard, job demo.\n"
              "Remove it when done: rm -rf %s\n",
              data, data, data, keep.c_str());
  return shown.isOk() && rc == 0 && all_found ? 0 : 1;
}

}  // namespace

void addDemoCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<DemoOptions>();
  CLI::App* demo = app.add_subcommand("demo", "Run a local argusd, stream a simulated cluster with faults into it, diagnose it");
  demo->add_option("--ranks", options->ranks, "ranks in the simulated cluster (a multiple of 32: tp 8 x pp 4 x dp)")
      ->check(CLI::Range(32u, 65536u))
      ->capture_default_str();
  demo->add_option("--steps", options->steps, "training steps per rank")->check(CLI::Range(uint64_t{150}, uint64_t{100000}))->capture_default_str();
  demo->add_option("--seed", options->seed, "the simulator's seed (which ranks, stage and link the faults hit)")->capture_default_str();
  demo->add_option("--keep", options->keep_dir, "keep argusd's data in this directory (default: a fresh temporary one, kept)");
  demo->callback([options, exit_code] {
    if (options->ranks % 32 != 0) {
      std::fprintf(stderr, "argus demo: --ranks %u is not a multiple of 32 (tensor-parallel 8 x pipeline 4)\n", options->ranks);
      *exit_code = 1;
      return;
    }
    if (!options->keep_dir.empty()) std::filesystem::create_directories(options->keep_dir);
    *exit_code = runDemo(*options);
  });
}

}  // namespace argus::cli
