// bench_assembler: CPU cost of folding kernel events into StepRecords (DESIGN.md §8 target:
// <= 25 ns per kernel event), over the real Kineto traces and a synthetic stream, side by
// side in one run (the machine is shared and noisy: compare the ratios).
//
// The figure is all-in: onEvent for every event of the stream (ranges, launches, copies,
// collectives, kernels) plus the once-per-step fold and flush(), divided by the kernel
// events. Each stream is built once, outside the timing (the real ones by the importer:
// readKinetoTrace, importAssemblerOptions); a pass feeds it into a fresh StepAssembler.
//
// The synthetic stream is shaped like a real training step: ~4,000 kernels per step on a
// compute and an NCCL stream, launched by one thread inside forward / backward (per-op
// autograd ranges) / optimizer ranges, ProfilerStep#N markers.
//
// Usage: bench_assembler [steps=200] [kernels_per_step=4000] [passes=5] [dir=/work/shared/data/kineto]
//        bench_assembler --callgrind [steps] [kernels_per_step] [dir]
// --callgrind feeds each stream once with callgrind instrumentation on only around the
// feeding, and dumps one profile per stream; bench/callgrind_assembler.sh runs it under
// valgrind and prints instructions per kernel event. Prints figures; asserts nothing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "capture/name_table.h"
#include "capture/step_assembler.h"
#include "import/kineto_reader.h"
#include "import/trace_replay.h"

#include "bench/callgrind_section.h"

using namespace argus;
using namespace argus::capture;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// One stream to feed: the events and names outlive every pass.
struct Stream {
  std::string label;
  NameTable names;
  std::vector<TraceEvent> events;
  StepAssemblerOptions options;
};

void buildSynthetic(Stream& s, int steps, int kernels_per_step) {
  std::vector<std::pair<uint32_t, uint64_t>> fwd, bwd;
  auto kernelName = [&](const std::string& n) {
    uint32_t id = s.names.intern(n);
    return std::make_pair(id, model::kernelSignature(n, {108, 1, 1, 256, 1, 1}));
  };
  for (int i = 0; i < 40; ++i) fwd.push_back(kernelName("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_fwd_" + std::to_string(i) + ">"));
  for (int i = 0; i < 40; ++i) bwd.push_back(kernelName("void at::native::elementwise_kernel_bwd_" + std::to_string(i)));
  auto nccl = kernelName("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  auto adam = kernelName("void at::native::multi_tensor_apply_kernel<FusedAdamMathFunctor>");
  uint32_t forward = s.names.intern("forward"), backward = s.names.intern("backward");
  uint32_t optimizer = s.names.intern("Optimizer.step#AdamW.step");
  uint32_t mm_backward = s.names.intern("autograd::engine::evaluate_function: MmBackward0");
  std::vector<uint32_t> step_names;
  for (int i = 0; i < steps; ++i) step_names.push_back(s.names.intern("ProfilerStep#" + std::to_string(i)));

  const int64_t kKernelNs = 20'000;  // 20 us kernels, 2 us launch spacing: the GPU runs behind
  int64_t t = 1'700'000'000'000'000'000;
  uint32_t corr = 1;
  auto push = [&](EventType type, uint32_t name, int64_t b, int64_t e) {
    TraceEvent ev;
    ev.type = type, ev.name = name, ev.start_ns = b, ev.end_ns = e, ev.thread = 1;
    s.events.push_back(ev);
  };
  for (int step = 0; step < steps; ++step) {
    int64_t gpu = t + 50'000;
    push(EventType::kRangeBegin, step_names[step], t, t);
    int n_fwd = kernels_per_step * 4 / 10, n_bwd = kernels_per_step * 5 / 10, n_comm = kernels_per_step / 20;
    int n_opt = kernels_per_step - n_fwd - n_bwd - n_comm;
    auto launchKernel = [&](std::pair<uint32_t, uint64_t> k, uint32_t stream, int64_t* gpu_clock) {
      t += 2'000;
      TraceEvent ev;
      ev.type = EventType::kKernel;
      ev.name = k.first, ev.id = k.second, ev.geometry = {108, 1, 1, 256, 1, 1};
      ev.start_ns = std::max(*gpu_clock, t + 5'000);
      ev.end_ns = ev.start_ns + kKernelNs + (corr % 7) * 100;
      ev.launch_ns = t, ev.thread = 1, ev.stream = stream, ev.correlation = corr++;
      *gpu_clock = ev.end_ns;
      s.events.push_back(ev);
    };
    push(EventType::kRangeBegin, forward, t, t);
    for (int i = 0; i < n_fwd; ++i) launchKernel(fwd[i % fwd.size()], 7, &gpu);
    push(EventType::kRangeEnd, 0, t, t);
    push(EventType::kRangeBegin, backward, t, t);
    int64_t comm_gpu = gpu;
    for (int i = 0; i < n_bwd; ++i) {
      if (i % 8 == 0) push(EventType::kRangeBegin, mm_backward, t, t);
      launchKernel(bwd[i % bwd.size()], 7, &gpu);
      if (i % 8 == 7) push(EventType::kRangeEnd, 0, t, t);
      if (i % 10 == 0 && i / 10 < n_comm) launchKernel(nccl, 8, &comm_gpu);
    }
    if (n_bwd % 8 != 0) push(EventType::kRangeEnd, 0, t, t);
    push(EventType::kRangeEnd, 0, t, t);
    push(EventType::kRangeBegin, optimizer, t, t);
    for (int i = 0; i < n_opt; ++i) launchKernel(adam, 7, &gpu);
    push(EventType::kRangeEnd, 0, t, t);
    t = std::max({gpu, comm_gpu, t}) + 100'000;  // the host syncs at the end of the step
    push(EventType::kRangeEnd, 0, t, t);
  }
  // Events reach the assembler in time order, as an importer sorts them and as NVTX plus
  // CUPTI deliver them within a buffer.
  std::stable_sort(s.events.begin(), s.events.end(), [](const TraceEvent& a, const TraceEvent& b) { return a.start_ns < b.start_ns; });
  s.options.emit_lag_ns = 1'000'000;
  s.label = "synthetic " + std::to_string(steps) + " steps x " + std::to_string(kernels_per_step) + " kernels";
}

// Every Kineto trace under `dir`, sorted by path; exits on a file the importer refuses.
std::vector<Stream> readTraces(const std::string& dir) {
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().string().ends_with(".json.gz")) paths.push_back(e.path().string());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<Stream> out(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    auto trace = import::readKinetoTrace(paths[i]);
    if (!trace.isOk()) {
      std::fprintf(stderr, "%s\n", trace.status().toString().c_str());
      std::exit(1);
    }
    out[i].label = fs::relative(paths[i], dir, ec).string();
    out[i].names = std::move(trace->names);
    out[i].events = std::move(trace->events);
    out[i].options = import::importAssemblerOptions(trace->rank.value_or(0));
  }
  return out;
}

struct PassResult {
  double ns = 0;  // wall time of the feeding
  AssemblerStats stats;
};

// One pass: a fresh assembler (built outside the timing), every event, flush().
PassResult feed(const Stream& s, bool callgrind) {
  StepAssembler a(s.names, s.options, [](const StepOutput&) {});
#if ARGUS_HAVE_CALLGRIND
  if (callgrind) {
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_ZERO_STATS;
  }
#endif
  auto t0 = Clock::now();
  for (const TraceEvent& e : s.events) a.onEvent(e);
  a.flush();
  auto dt = Clock::now() - t0;
#if ARGUS_HAVE_CALLGRIND
  if (callgrind) {
    CALLGRIND_DUMP_STATS_AT(s.label.c_str());
    CALLGRIND_STOP_INSTRUMENTATION;
  }
#endif
  return {std::chrono::duration<double, std::nano>(dt).count(), a.stats()};
}

// Best pass of at least `passes`, repeated until ~0.3 s went into the stream.
PassResult best(const Stream& s, int passes) {
  PassResult out = feed(s, false);
  double spent = out.ns;
  for (int p = 1; p < passes || (spent < 3e8 && p < 10'000); ++p) {
    PassResult r = feed(s, false);
    spent += r.ns;
    if (r.ns < out.ns) out = r;
  }
  return out;
}

double perKernel(double ns, uint64_t kernels) { return kernels == 0 ? 0 : ns / static_cast<double>(kernels); }

int callgrindMode(const Stream& synthetic, const std::vector<Stream>& traces) {
  if (!ARGUS_HAVE_CALLGRIND) {
    std::fprintf(stderr, "bench_assembler: built without <valgrind/callgrind.h>: --callgrind is unavailable\n");
    return 1;
  }
  // One line per stream for bench/callgrind_assembler.sh: the label matches the dump's trigger.
  auto run = [](const Stream& s) {
    PassResult r = feed(s, true);
    std::printf("callgrind-stream\t%s\t%llu\t%llu\n", s.label.c_str(), static_cast<unsigned long long>(r.stats.events),
                static_cast<unsigned long long>(r.stats.kernels));
  };
  run(synthetic);
  for (const Stream& s : traces) run(s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool callgrind = argc > 1 && std::strcmp(argv[1], "--callgrind") == 0;
  int arg = callgrind ? 2 : 1;
  auto next = [&](const char* fallback) { return arg < argc ? argv[arg++] : fallback; };
  int steps = std::atoi(next("200"));
  int kernels_per_step = std::atoi(next("4000"));
  int passes = callgrind ? 1 : std::atoi(next("5"));
  std::string dir = next("/work/shared/data/kineto");

  Stream synthetic;
  buildSynthetic(synthetic, steps, kernels_per_step);
  std::vector<Stream> traces = readTraces(dir);
  if (callgrind) return callgrindMode(synthetic, traces);

  std::printf("bench_assembler: all-in ns per kernel event (every event's onEvent + per-step fold + flush), best of >= %d passes\n",
              passes);
  std::printf("%-48s %9s %9s %6s %9s %8s\n", "stream", "events", "kernels", "steps", "ns/kernel", "x synth");
  // The synthetic stream before and after the traces: the better of the two is the baseline.
  PassResult synth = best(synthetic, passes);
  std::vector<PassResult> results;
  for (const Stream& s : traces) results.push_back(best(s, passes));
  PassResult again = best(synthetic, passes);
  if (again.ns < synth.ns) synth = again;
  if (synth.stats.late_events + synth.stats.invalid_events + synth.stats.buffer_full != 0) {
    std::fprintf(stderr, "BUG: the synthetic stream lost events\n");
    return 1;
  }
  double synth_ns = perKernel(synth.ns, synth.stats.kernels);
  auto line = [&](const std::string& label, const AssemblerStats& st, double ns) {
    double per = perKernel(ns, st.kernels);
    std::printf("%-48s %9llu %9llu %6llu %9.1f %8.2f\n", label.c_str(), static_cast<unsigned long long>(st.events),
                static_cast<unsigned long long>(st.kernels), static_cast<unsigned long long>(st.steps_emitted), per, per / synth_ns);
  };
  AssemblerStats total;
  double total_ns = 0;
  for (size_t i = 0; i < traces.size(); ++i) {
    line(traces[i].label, results[i].stats, results[i].ns);
    total.events += results[i].stats.events;
    total.kernels += results[i].stats.kernels;
    total.steps_emitted += results[i].stats.steps_emitted;
    total_ns += results[i].ns;
  }
  line("total (real traces)", total, total_ns);
  line(synthetic.label, synth.stats, synth.ns);
  std::printf("target: <= 25 ns per kernel event\n");
  return 0;
}
