// bench_assembler: CPU cost of folding kernel events into StepRecords (DESIGN.md §8 target:
// <= 25 ns per kernel event), over the real Kineto traces and a synthetic stream, side by
// side in one run (the machine is shared and noisy: compare the ratios).
//
// The figure is all-in: onEvent for every event of the stream (ranges, launches, copies,
// collectives, kernels) plus the once-per-step fold and flush(), divided by the kernel
// events. Each stream is built once, outside the timing (the real ones by the importer, in
// its order: readKinetoTrace, importAssemblerOptions). Two figures per stream:
// - cold: the stream fed into a fresh StepAssembler. It includes what an assembler does once
//   per distinct name or signature (classifying the name, its dictionary entry) and its
//   buffers' first growth; the real traces hold only 1-20 steps, so that is much of it.
// - steady: the stream fed again into the assembler that just took it, shifted in time past
//   the first pass: every step after a job's first, in a shim that runs for days.
// - per kernel: the cost of folding one kernel event: steady, minus the steady cost of the
//   same stream without its kernel events, per kernel. A profiler trace has ~3 CPU op
//   ranges per kernel (cpu_op events the rules ignore) that the all-in figures charge
//   to the kernels; the capture shim sees NVTX ranges only, measured on their own.
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
#include <iterator>
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
  std::vector<TraceEvent> later;  // `events` shifted past their own end (the steady pass)
  // Both without their kernel events: the baseline of the per-kernel figure.
  std::vector<TraceEvent> events_no_kernels, later_no_kernels;
  StepAssemblerOptions options;
};

std::vector<TraceEvent> withoutKernels(const std::vector<TraceEvent>& events) {
  std::vector<TraceEvent> out;
  std::copy_if(events.begin(), events.end(), std::back_inserter(out), [](const TraceEvent& e) { return e.type != EventType::kKernel; });
  return out;
}

// Fills s.later (every time of s.events moved by the stream's span plus a second) and the
// streams without kernels.
void prepare(Stream& s) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const TraceEvent& e : s.events) lo = std::min(lo, e.start_ns), hi = std::max({hi, e.start_ns, e.end_ns});
  const int64_t shift = s.events.empty() ? 0 : hi - lo + 1'000'000'000;
  s.later = s.events;
  for (TraceEvent& e : s.later) {
    e.start_ns += shift, e.end_ns += shift;
    if (e.launch_ns != kNoTime) e.launch_ns += shift;
  }
  s.events_no_kernels = withoutKernels(s.events);
  s.later_no_kernels = withoutKernels(s.later);
}

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
  // Events reach the assembler in plain time order, the finest interleaving of CPU and GPU
  // events (the real traces come in the importer's order: CPU events a slice ahead).
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
  AssemblerStats stats;  // of the timed pass alone
};

enum class Pass { kCold, kSteady };

AssemblerStats minus(AssemblerStats a, const AssemblerStats& b) {
  a.events -= b.events, a.kernels -= b.kernels, a.steps_emitted -= b.steps_emitted;
  a.late_events -= b.late_events, a.invalid_events -= b.invalid_events, a.buffer_full -= b.buffer_full;
  return a;
}

// One pass: a fresh assembler (built outside the timing); for kSteady, warmed by the stream
// outside the timing. Then every event, flush(). `kernels`: false feeds the stream without
// its kernel events. `callgrind_label`: dump a profile of the pass.
PassResult feed(const Stream& s, Pass pass, bool kernels = true, const char* callgrind_label = nullptr) {
  StepAssembler a(s.names, s.options, [](const StepOutput&) {});
  const std::vector<TraceEvent>* events = kernels ? &s.events : &s.events_no_kernels;
  if (pass == Pass::kSteady) {
    a.onEvents(*events);
    a.flush();
    events = kernels ? &s.later : &s.later_no_kernels;
  }
  const AssemblerStats before = a.stats();
#if ARGUS_HAVE_CALLGRIND
  if (callgrind_label != nullptr) {
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_ZERO_STATS;
  }
#endif
  auto t0 = Clock::now();
  a.onEvents(*events);
  a.flush();
  auto dt = Clock::now() - t0;
#if ARGUS_HAVE_CALLGRIND
  if (callgrind_label != nullptr) {
    CALLGRIND_DUMP_STATS_AT(callgrind_label);
    CALLGRIND_STOP_INSTRUMENTATION;
  }
#endif
  return {std::chrono::duration<double, std::nano>(dt).count(), minus(a.stats(), before)};
}

// Best pass of at least `passes`, repeated until ~0.3 s went into the stream.
PassResult best(const Stream& s, Pass pass, int passes, bool kernels = true) {
  PassResult out = feed(s, pass, kernels);
  double spent = out.ns;
  for (int p = 1; p < passes || (spent < 3e8 && p < 10'000); ++p) {
    PassResult r = feed(s, pass, kernels);
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
  // One line per stream for bench/callgrind_assembler.sh; its dumps' triggers are
  // "cold <label>", "steady <label>" and "steady-no-kernels <label>".
  auto run = [](const Stream& s) {
    PassResult r = feed(s, Pass::kCold, true, ("cold " + s.label).c_str());
    feed(s, Pass::kSteady, true, ("steady " + s.label).c_str());
    feed(s, Pass::kSteady, false, ("steady-no-kernels " + s.label).c_str());
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
  prepare(synthetic);
  for (Stream& s : traces) prepare(s);
  if (callgrind) return callgrindMode(synthetic, traces);

  std::printf("bench_assembler: ns per kernel event, best of >= %d passes. all-in: every event's onEvent + per-step fold + flush,\n"
              "per kernel; cold: a fresh assembler; steady: one that just took the same stream (every step after a job's first);\n"
              "per event: steady, per event of the stream; kernel: steady minus steady without the kernel events, per kernel\n",
              passes);
  std::printf("%-48s %8s %8s %5s %9s %9s %9s %9s %7s\n", "stream", "events", "kernels", "steps", "cold", "steady", "per event",
              "kernel", "x synth");
  struct Figures {
    PassResult cold, steady, no_kernels;
  };
  auto measure = [&](const Stream& s) {
    return Figures{best(s, Pass::kCold, passes), best(s, Pass::kSteady, passes), best(s, Pass::kSteady, passes, false)};
  };
  // The synthetic stream before and after the traces: the better of the two is the baseline.
  Figures synth = measure(synthetic);
  std::vector<Figures> results;
  for (const Stream& s : traces) results.push_back(measure(s));
  Figures again = measure(synthetic);
  if (again.steady.ns < synth.steady.ns) synth = again;
  if (synth.steady.stats.late_events + synth.steady.stats.invalid_events + synth.steady.stats.buffer_full != 0) {
    std::fprintf(stderr, "BUG: the synthetic stream lost events\n");
    return 1;
  }
  double synth_ns = perKernel(synth.steady.ns, synth.steady.stats.kernels);
  auto line = [&](const std::string& label, const AssemblerStats& st, const Figures& f) {
    double per = perKernel(f.steady.ns, st.kernels);
    std::printf("%-48s %8llu %8llu %5llu %9.1f %9.1f %9.1f %9.1f %7.2f\n", label.c_str(), static_cast<unsigned long long>(st.events),
                static_cast<unsigned long long>(st.kernels), static_cast<unsigned long long>(st.steps_emitted),
                perKernel(f.cold.ns, st.kernels), per, perKernel(f.steady.ns, st.events), perKernel(f.steady.ns - f.no_kernels.ns, st.kernels),
                per / synth_ns);
  };
  AssemblerStats total;
  Figures sum;
  for (size_t i = 0; i < traces.size(); ++i) {
    line(traces[i].label, results[i].cold.stats, results[i]);
    total.events += results[i].cold.stats.events;
    total.kernels += results[i].cold.stats.kernels;
    total.steps_emitted += results[i].cold.stats.steps_emitted;
    sum.cold.ns += results[i].cold.ns, sum.steady.ns += results[i].steady.ns, sum.no_kernels.ns += results[i].no_kernels.ns;
  }
  line("total (real traces)", total, sum);
  line(synthetic.label, synth.steady.stats, synth);
  std::printf("target: <= 25 ns to fold one kernel event\n");
  return 0;
}
