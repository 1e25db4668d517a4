#include "cli/simulate_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "cli/cluster_sink.h"
#include "cli/trace_kernel_mix.h"
#include "simulate/cluster_simulator.h"

namespace argus::cli {

namespace {

struct SimulateOptions {
  SinkOptions sink;
  simulate::ClusterOptions cluster;
  uint32_t ranks = 0;  // instead of --dp: dp = ranks / (tp * pp)
  uint64_t steps = 1000;
  std::vector<std::string> faults;
  std::string truth_file;
  std::string trace;
  bool builtin_mix = false;
  size_t kernels = 64;
  uint32_t block = 64;
  double steps_per_second = 0;
  unsigned threads = 0;
};

// The ground truth as JSON (docs/cli/simulate.md, "The truth file"): the layout, the kernel mix, and each
// fault with the steps it covers (inclusive) and what it hit.
nlohmann::json truthJson(const SimulateOptions& o, const simulate::ClusterSimulator& sim) {
  const simulate::ClusterLayout& l = sim.layout();
  nlohmann::json faults = nlohmann::json::array();
  for (const simulate::Fault& f : sim.faults()) {
    const uint64_t last = o.steps == 0 ? 0 : o.steps - 1;
    nlohmann::json j{{"kind", simulate::faultKindName(f.kind)},
                     {"from_step", f.from_step},
                     {"to_step", f.steps == 0 ? last : std::min(last, f.from_step + f.steps - 1)},
                     {"severity", f.severity}};
    if (f.rank) j["ranks"] = {*f.rank};
    if (f.stage) j["pp_rank"] = *f.stage;
    if (f.hosts) {
      j["hosts"] = {f.hosts->first, f.hosts->second};
      j["link"] = simulate::ClusterLayout::hostName(f.hosts->first) + "/" + simulate::ClusterLayout::hostName(f.hosts->second);
    }
    if (!f.kernel.empty()) j["kernel"] = f.kernel;
    faults.push_back(std::move(j));
  }
  return {{"version", 1},
          {"job", o.sink.job},
          {"steps", o.steps},
          {"seed", o.cluster.seed},
          {"layout", {{"tp", l.tp}, {"pp", l.pp}, {"dp", l.dp}, {"ranks", l.ranks()}, {"hosts", l.hosts()}, {"gpus_per_host", l.gpus_per_host}}},
          {"microbatches", o.cluster.microbatches},
          {"kernel_mix", {{"source", sim.mix().source}, {"kernels", sim.mix().kernels.size()}, {"coverage", sim.mix().coverage}}},
          {"faults", faults}};
}

Result<std::unique_ptr<simulate::ClusterSimulator>> makeSimulator(SimulateOptions& o) {
  simulate::ClusterLayout& l = o.cluster.layout;
  if (o.ranks > 0) {
    const uint64_t per_replica = uint64_t{l.tp} * l.pp;
    if (o.ranks % per_replica != 0) {
      return Status::invalidArgument("--ranks " + std::to_string(o.ranks) + " is not a multiple of tp x pp = " + std::to_string(per_replica));
    }
    l.dp = static_cast<uint32_t>(o.ranks / per_replica);
  }
  for (const std::string& spec : o.faults) {
    Result<simulate::Fault> f = simulate::parseFault(spec);
    if (!f.isOk()) return f.status();
    o.cluster.faults.push_back(*f);
  }
  simulate::KernelMix mix;
  if (o.trace.empty() && !o.builtin_mix) o.trace = defaultMixTrace();
  if (o.trace.empty()) {
    if (!o.builtin_mix) std::fprintf(stderr, "argus simulate: no trace to take the kernel mix from (--trace FILE): using the built-in mix\n");
    mix = simulate::builtinKernelMix(o.kernels);
  } else {
    Result<simulate::KernelMix> m = kernelMixFromTrace(o.trace, o.kernels);
    if (!m.isOk()) return m.status().withContext("kernel mix");
    mix = std::move(m).value();
  }
  return simulate::ClusterSimulator::create(o.cluster, std::move(mix));
}

int runSimulate(SimulateOptions o) {
  auto fail = [](const Status& s) {
    std::fprintf(stderr, "argus simulate: %s\n", s.toString().c_str());
    return 1;
  };
  Result<std::unique_ptr<simulate::ClusterSimulator>> made = makeSimulator(o);
  if (!made.isOk()) return fail(made.status());
  simulate::ClusterSimulator& sim = **made;
  if (!o.truth_file.empty()) {  // first: the truth of a run cut short still says what was injected
    std::ofstream out(o.truth_file);
    out << truthJson(o, sim).dump(2) << "\n";
    if (!out) return fail(Status::ioError("cannot write " + o.truth_file));
  }
  Result<std::unique_ptr<ClusterSink>> sink = openClusterSink(o.sink, sim);
  if (!sink.isOk()) return fail(sink.status());

  const simulate::ClusterLayout& l = sim.layout();
  std::fprintf(stderr, "argus simulate: job %s, %u ranks (tp %u x pp %u x dp %u, %u hosts), %llu steps, %u microbatches; kernel mix: %s (%zu kernels, %.0f%% of its compute)\n",
               o.sink.job.c_str(), l.ranks(), l.tp, l.pp, l.dp, l.hosts(), static_cast<unsigned long long>(o.steps), o.cluster.microbatches,
               sim.mix().source.c_str(), sim.mix().kernels.size(), 100 * sim.mix().coverage);
  for (const simulate::Fault& f : sim.faults()) {
    std::string target = f.rank ? "rank " + std::to_string(*f.rank)
                         : f.stage ? "stage " + std::to_string(*f.stage)
                                   : simulate::ClusterLayout::hostName(f.hosts->first) + "/" + simulate::ClusterLayout::hostName(f.hosts->second);
    std::fprintf(stderr, "argus simulate: fault %s on %s from step %llu for %s, severity %g\n", simulate::faultKindName(f.kind), target.c_str(),
                 static_cast<unsigned long long>(f.from_step), f.steps == 0 ? "the rest" : (std::to_string(f.steps) + " steps").c_str(), f.severity);
  }
  const unsigned threads = o.threads > 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  const auto t0 = std::chrono::steady_clock::now();
  if (Status s = runSimulation(sim, **sink, o.steps, o.block, threads, o.steps_per_second); !s.isOk()) return fail(s);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double records = static_cast<double>(o.steps) * l.ranks();
  std::printf("argus simulate: %.0f records (%u ranks x %llu steps) -> %s in %.1f s (%.0f rank-steps/s)%s%s\n", records, l.ranks(),
              static_cast<unsigned long long>(o.steps), (*sink)->where().c_str(), secs, records / std::max(secs, 1e-9),
              o.truth_file.empty() ? "" : "; truth: ", o.truth_file.c_str());
  return 0;
}

}  // namespace

void addSimulateCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<SimulateOptions>();
  o->sink.job = "sim";
  simulate::ClusterOptions& c = o->cluster;
  c.layout = simulate::ClusterLayout{8, 4, 32, 8};
  c.checkpoint_every = 500;
  CLI::App* cmd = app.add_subcommand("simulate", "Simulate a training job with injected faults, into argusd or a data dir");
  cmd->add_option("--job", o->sink.job, "job id")->capture_default_str();
  cmd->add_option("--server", o->sink.server, "argusd ingest address HOST:PORT (one session per rank)");
  cmd->add_option("--data", o->sink.data_dir, "data directory to write into (argusd must not be running on it)");
  cmd->add_option("--token", o->sink.token, "auth token for argusd");
  cmd->add_option("--tp", c.layout.tp, "tensor-parallel size")->check(CLI::Range(1u, 64u))->capture_default_str();
  cmd->add_option("--pp", c.layout.pp, "pipeline stages")->check(CLI::Range(1u, 256u))->capture_default_str();
  cmd->add_option("--dp", c.layout.dp, "data-parallel replicas")->check(CLI::Range(1u, 65536u))->capture_default_str();
  cmd->add_option("--ranks", o->ranks, "total ranks instead of --dp (a multiple of tp x pp)");
  cmd->add_option("--gpus-per-host", c.layout.gpus_per_host, "GPUs per host")->check(CLI::Range(1u, 64u))->capture_default_str();
  cmd->add_option("--microbatches", c.microbatches, "microbatches per step")->check(CLI::Range(1u, 1024u))->capture_default_str();
  cmd->add_option("--steps", o->steps, "training steps")->check(CLI::Range(uint64_t{1}, uint64_t{100'000'000}))->capture_default_str();
  cmd->add_option("--seed", c.seed, "random seed (same seed, same records)")->capture_default_str();
  cmd->add_option("--fault", o->faults, "KIND:at=STEP[,for=N][,severity=X][,rank=R|stage=S|hosts=A-B][,kernel=TEXT] (repeatable)");
  cmd->add_option("--truth", o->truth_file, "write the ground truth (layout, faults) to this JSON file");
  cmd->add_option("--trace", o->trace, "Kineto trace to take the kernel mix from (default: the shared A100 trace when present)");
  cmd->add_flag("--builtin-mix", o->builtin_mix, "use the built-in synthetic kernel mix, not a trace");
  cmd->add_option("--kernels", o->kernels, "kernel signatures kept from the trace (most time first)")->check(CLI::Range(size_t{1}, size_t{4096}))->capture_default_str();
  cmd->add_option("--warmup", c.warmup_steps, "steps of warm-up (the first about 2x slower)")->capture_default_str();
  cmd->add_option("--checkpoint-every", c.checkpoint_every, "a checkpoint stall every N steps (0: none)")->capture_default_str();
  cmd->add_option("--block", o->block, "steps simulated at a time (memory: ~200 bytes per rank and step)")->check(CLI::Range(1u, 4096u))->capture_default_str();
  cmd->add_option("--steps-per-second", o->steps_per_second, "pace the steps like a running job (0: as fast as the sink takes them)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "threads building records (default: one per core)");
  cmd->callback([o, exit_code] { *exit_code = runSimulate(*o); });
}

}  // namespace argus::cli
