#include "cli/eval_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "cli/argusd_process.h"
#include "cli/cluster_sink.h"
#include "cli/diagnosis_query.h"
#include "cli/fault_matching.h"
#include "cli/table_printer.h"
#include "cli/trace_eval.h"
#include "cli/trace_kernel_mix.h"
#include "simulate/cluster_simulator.h"

namespace argus::cli {

namespace {

struct EvalOptions {
  std::vector<uint32_t> scales = {256, 1024};
  uint64_t steps = 300;
  uint64_t clean_steps = 2000;  // the fault-free run: long enough to count false windows
  uint32_t runs = 3;  // per fault class and scale
  uint64_t seed = 1;
  std::string work_dir;
  TraceEvalOptions traces = [] {
    TraceEvalOptions t;
    t.kineto_dir = sharedDataDir() + "/kineto";
    return t;
  }();
  bool no_traces = false;
};

// A cluster of `ranks`: tensor-parallel 8 (fewer on tiny ones), pipeline 4, the rest data-parallel.
simulate::ClusterLayout layoutFor(uint32_t ranks) {
  simulate::ClusterLayout l;
  l.tp = ranks >= 64 ? 8 : 2;
  l.pp = 4;
  l.gpus_per_host = l.tp >= 8 ? 8 : 4;
  l.dp = std::max(1u, ranks / (l.tp * l.pp));
  return l;
}

struct Scenario {
  std::string name;
  uint32_t ranks = 0;
  uint64_t steps = 0;
  uint64_t seed = 0;
  std::vector<simulate::Fault> faults;  // empty: fault-free
};

// Per scale: a fault-free run, `runs` runs of each class alone (random onset and severity,
// from barely visible to gross), and one run with every class at different times.
std::vector<Scenario> scenarios(const EvalOptions& o) {
  std::vector<Scenario> out;
  std::mt19937_64 rng(o.seed);
  auto fault = [&](simulate::FaultKind kind, uint64_t at, uint64_t steps) {
    simulate::Fault f;
    f.kind = kind;
    f.from_step = at;
    f.steps = kind == simulate::FaultKind::kJitStall ? 3 : steps;
    // Severity from half to one and a half times the default (a link: a third to all of it
    // and more, 2x to 5x slower transfers).
    const double u = std::uniform_real_distribution<double>(0.5, 1.5)(rng);
    f.severity = simulate::Fault::defaultSeverity(kind) * u;
    return f;
  };
  for (uint32_t ranks : o.scales) {
    out.push_back({"fault-free", ranks, o.clean_steps, rng(), {}});
    for (int k = 0; k < simulate::kFaultKindCount; ++k) {
      for (uint32_t i = 0; i < o.runs; ++i) {
        const uint64_t at = 60 + rng() % (o.steps - 100);
        out.push_back({simulate::faultKindName(static_cast<simulate::FaultKind>(k)), ranks, o.steps, rng(), {fault(static_cast<simulate::FaultKind>(k), at, 20)}});
      }
    }
    out.push_back({"mixed", ranks, o.steps, rng(), simulate::staggeredFaults(60, o.steps - 10)});
  }
  return out;
}

// What one class gathers over its runs.
struct ClassScore {
  uint32_t injected = 0, detected = 0, localized = 0;
  uint32_t findings = 0, explaining = 0;  // findings of this kind, and those that explain a fault
  std::vector<double> latency_steps;
};

struct Totals {
  std::map<std::string, ClassScore> classes;
  uint64_t clean_steps = 0, clean_windows = 0;
  std::vector<double> query_secs;
  std::vector<double> step_secs;  // the simulated jobs' median step time
};

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

Status runScenario(const simulate::KernelMix& mix, const Scenario& sc, const std::string& dir, Totals* t) {
  simulate::ClusterOptions c;
  c.layout = layoutFor(sc.ranks);
  c.seed = sc.seed;
  c.checkpoint_every = 100;
  c.faults = sc.faults;
  Result<std::unique_ptr<simulate::ClusterSimulator>> made = simulate::ClusterSimulator::create(c, mix);
  if (!made.isOk()) return made.status();
  simulate::ClusterSimulator& sim = **made;
  SinkOptions so;
  so.job = "eval";
  so.data_dir = dir;
  {
    Result<std::unique_ptr<ClusterSink>> sink = openClusterSink(so, sim);
    if (!sink.isOk()) return sink.status();
    ARGUS_RETURN_IF_ERROR(runSimulation(sim, **sink, sc.steps, 64, std::max(1u, std::thread::hardware_concurrency())));
  }
  Result<std::unique_ptr<QueryTarget>> target = QueryTarget::openData(dir);
  if (!target.isOk()) return target.status();
  double secs = 0;
  Result<std::vector<diagnose::Finding>> found = runDiagnosis(**target, "eval", &secs);
  if (!found.isOk()) return found.status();
  t->query_secs.push_back(secs);
  Result<std::string> iter = (*target)->answerJson("SELECT median(iter_ns) FROM steps WHERE job = 'eval'", query::QueryOptions{});
  if (iter.isOk()) {
    const size_t at = iter->find("\"rows\":[[");
    if (at != std::string::npos) t->step_secs.push_back(std::strtod(iter->c_str() + at + 9, nullptr) / 1e9);
  }

  const uint64_t last = sc.steps - 1;
  const auto& faults = sim.faults();
  if (faults.empty()) {
    t->clean_steps += sc.steps;
    std::vector<std::pair<uint64_t, uint64_t>> windows;
    for (const auto& f : *found) windows.emplace_back(f.from_step, f.to_step);
    std::sort(windows.begin(), windows.end());
    t->clean_windows += static_cast<uint64_t>(std::unique(windows.begin(), windows.end()) - windows.begin());
  }
  for (const simulate::Fault& f : faults) {
    ClassScore& s = t->classes[simulate::faultKindName(f.kind)];
    ++s.injected;
    const FaultMatch m = matchFault(f, last, *found);
    if (m.finding == nullptr) continue;
    ++s.detected;
    if (m.localized) ++s.localized;
    // When the finding can exist: the window opens once min_steps (2) steps are anomalous.
    s.latency_steps.push_back(static_cast<double>(m.latency_steps + 1));
  }
  for (const diagnose::Finding& x : *found) {
    if (x.kind == diagnose::FindingKind::kDegradedKernel || x.kind == diagnose::FindingKind::kUnexplained) continue;
    ClassScore& s = t->classes[diagnose::findingKindName(x.kind)];
    ++s.findings;
    if (explainsSome(x, faults, last)) ++s.explaining;
  }
  return Status::ok();
}

std::string ratio(uint32_t n, uint32_t d) {
  if (d == 0) return "-";
  char b[48];
  std::snprintf(b, sizeof b, "%.1f%% (%u/%u)", 100.0 * n / d, n, d);
  return b;
}

int runEval(const EvalOptions& o) {
  const Result<simulate::KernelMix> mix = defaultKernelMix(64);
  if (!mix.isOk()) {
    std::fprintf(stderr, "argus eval: %s\n", mix.status().toString().c_str());
    return 1;
  }
  const std::string work = o.work_dir.empty() ? makeTempDir("argus-eval") : o.work_dir;
  const std::vector<Scenario> all = scenarios(o);
  std::printf("argus eval: %zu simulated jobs of %llu steps (scales", all.size(), static_cast<unsigned long long>(o.steps));
  for (uint32_t s : o.scales) std::printf(" %u", s);
  std::printf(" ranks), kernel mix %s; each diagnosed with %s\n", mix->source.c_str(), diagnosisQuery("eval").c_str());
  Totals totals;
  const auto t0 = std::chrono::steady_clock::now();
  int failed = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string dir = work + "/run-" + std::to_string(i);
    Status s = runScenario(*mix, all[i], dir, &totals);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (!s.isOk()) {
      std::fprintf(stderr, "argus eval: %s at %u ranks: %s\n", all[i].name.c_str(), all[i].ranks, s.toString().c_str());
      ++failed;
    }
    std::fprintf(stderr, "\r%zu/%zu jobs", i + 1, all.size());
  }
  std::fprintf(stderr, "\n");
  if (o.work_dir.empty()) removeTree(work);

  const double step_s = percentile(totals.step_secs, 0.5);
  TablePrinter table({"class", "recall", "localization", "precision", "latency steps p50 / max", "latency s p50 / max"});
  bool all_met = failed == 0;
  for (int k = 0; k < simulate::kFaultKindCount; ++k) {
    const std::string name = simulate::faultKindName(static_cast<simulate::FaultKind>(k));
    const ClassScore& s = totals.classes[name];
    char steps[48], secs[48];
    std::snprintf(steps, sizeof steps, "%.0f / %.0f", percentile(s.latency_steps, 0.5), percentile(s.latency_steps, 1));
    // Seconds after the onset: the steps it takes, then the query.
    std::snprintf(secs, sizeof secs, "%.1f / %.1f", percentile(s.latency_steps, 0.5) * step_s + percentile(totals.query_secs, 0.5),
                  percentile(s.latency_steps, 1) * step_s + percentile(totals.query_secs, 1));
    table.addRow({name, ratio(s.detected, s.injected), ratio(s.localized, s.injected), ratio(s.explaining, s.findings), steps, secs});
    all_met = all_met && s.injected > 0 && s.localized * 100 >= 99 * s.injected && percentile(s.latency_steps, 1) <= 3;
  }
  std::printf("\n");
  table.print(stdout);
  const double per_10k = totals.clean_steps > 0 ? 1e4 * static_cast<double>(totals.clean_windows) / static_cast<double>(totals.clean_steps) : 0;
  all_met = all_met && per_10k <= 1;
  std::printf("\nfault-free: %llu windows in %llu steps: %.2f false windows per 10,000 steps (target <= 1)\n",
              static_cast<unsigned long long>(totals.clean_windows), static_cast<unsigned long long>(totals.clean_steps), per_10k);
  std::printf("diagnose() query time: p50 %.3f s, max %.3f s over %zu jobs; simulated step time %.3f s\n", percentile(totals.query_secs, 0.5),
              percentile(totals.query_secs, 1), totals.query_secs.size(), step_s);
  std::printf("targets (localization >= 99%% per class, findings <= 3 steps after onset, <= 1 false window per 10,000 steps): %s\n",
              all_met ? "met" : "NOT met");
  if (!o.no_traces) {
    TraceEvalOptions to = o.traces;
    to.work_dir = o.work_dir;
    const TraceEvalResult real = runTraceEval(to, stdout);
    failed += real.ok ? 0 : 1;
    std::printf("real traces: the slowed rank blamed in %zu of %zu jobs (%.1f%%, target >= 99%%), %zu findings blaming another rank; %zu findings on the traces as recorded\n",
                real.localized, real.slowed, real.slowed == 0 ? 0.0 : 100.0 * static_cast<double>(real.localized) / static_cast<double>(real.slowed),
                real.misplaced, real.clean_findings);
  }
  std::printf("(%.0f s in all)\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return failed == 0 ? 0 : 1;
}

}  // namespace

void addEvalCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<EvalOptions>();
  CLI::App* cmd = app.add_subcommand("eval", "Score the diagnosis on simulated jobs: per fault class, recall, localization, precision, latency");
  cmd->add_option("--scales", o->scales, "cluster sizes in ranks (each a multiple of 32, or 8 to 31 for tiny tests)")->delimiter(',')->capture_default_str();
  cmd->add_option("--steps", o->steps, "steps per simulated job")->check(CLI::Range(uint64_t{150}, uint64_t{100000}))->capture_default_str();
  cmd->add_option("--clean-steps", o->clean_steps, "steps of each scale's fault-free job")->check(CLI::Range(uint64_t{150}, uint64_t{1000000}))->capture_default_str();
  cmd->add_option("--runs", o->runs, "runs of each fault class per scale (random targets and onsets)")->check(CLI::Range(1u, 1000u))->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed of the scenarios")->capture_default_str();
  cmd->add_option("--work", o->work_dir, "directory for the jobs' stores (default: a temporary one, removed)");
  cmd->add_option("--traces", o->traces.kineto_dir, "folder whose subfolders of rank-N.json.gz Kineto traces are each diagnosed as a job")->capture_default_str();
  cmd->add_option("--trace-factors", o->traces.factors, "factors by which one rank's compute kernels are slowed in the real traces")
      ->delimiter(',')
      ->check(CLI::Range(1.0, 100.0))
      ->capture_default_str();
  cmd->add_flag("--no-traces", o->no_traces, "skip the real traces");
  cmd->callback([o, exit_code] { *exit_code = runEval(*o); });
}

}  // namespace argus::cli
