// bench_assembler: CPU cost of folding kernel events into StepRecords (DESIGN.md §8 target:
// <= 25 ns per kernel event), over a synthetic stream shaped like a real training step:
// ~4,000 kernels per step on a compute and an NCCL stream, launched by one thread inside
// forward / backward (per-op autograd ranges) / optimizer ranges, ProfilerStep#N markers.
// The figure is all-in: onEvent for every event (ranges, launches, kernels) plus the
// once-per-step fold, divided by the kernel events. Real traces come with the importer.
// Prints figures; asserts nothing. Usage: bench_assembler [steps=200] [kernels_per_step=4000] [passes=5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "capture/name_table.h"
#include "capture/step_assembler.h"

using namespace argus::capture;
using Clock = std::chrono::steady_clock;

namespace {

struct Stream {
  NameTable names;
  std::vector<TraceEvent> events;
  size_t kernels = 0;
};

void buildStream(Stream& s, int steps, int kernels_per_step) {
  std::vector<std::pair<uint32_t, uint64_t>> fwd, bwd;
  auto kernelName = [&](const std::string& n) {
    uint32_t id = s.names.intern(n);
    return std::make_pair(id, argus::model::kernelSignature(n, {108, 1, 1, 256, 1, 1}));
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
    int64_t step_begin = t;
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
      ++s.kernels;
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
    (void)step_begin;
  }
  // Events reach the assembler in time order, as an importer sorts them and as NVTX plus
  // CUPTI deliver them within a buffer.
  std::stable_sort(s.events.begin(), s.events.end(), [](const TraceEvent& a, const TraceEvent& b) { return a.start_ns < b.start_ns; });
}

}  // namespace

int main(int argc, char** argv) {
  int steps = argc > 1 ? std::atoi(argv[1]) : 200;
  int kernels_per_step = argc > 2 ? std::atoi(argv[2]) : 4000;
  int passes = argc > 3 ? std::atoi(argv[3]) : 5;
  Stream s;
  buildStream(s, steps, kernels_per_step);

  double best_ns = 1e300, best_fold_share = 0;
  size_t records = 0, kernel_stats = 0;
  for (int p = 0; p < passes; ++p) {
    size_t n = 0;
    std::chrono::nanoseconds in_callback{0};
    StepAssemblerOptions opt;
    opt.emit_lag_ns = 1'000'000;
    StepAssembler a(s.names, opt, [&](const StepOutput& out) {
      ++n;
      kernel_stats = out.record.kernels.size();
    });
    auto t0 = Clock::now();
    for (const TraceEvent& e : s.events) a.onEvent(e);
    a.flush();
    auto dt = Clock::now() - t0;
    double ns = std::chrono::duration<double, std::nano>(dt - in_callback).count() / static_cast<double>(s.kernels);
    if (ns < best_ns) best_ns = ns;
    records = n;
    if (a.stats().late_events + a.stats().invalid_events + a.stats().buffer_full != 0) {
      std::fprintf(stderr, "BUG: the synthetic stream lost events\n");
      return 1;
    }
  }
  (void)best_fold_share;
  std::printf("bench_assembler: %d steps x %d kernels/step, %zu events (%zu kernels), %zu records, %zu kernel stats/step\n",
              steps, kernels_per_step, s.events.size(), s.kernels, records, kernel_stats);
  std::printf("  all-in ns per kernel event (best of %d): %.1f   (target <= 25)\n", passes, best_ns);
  return 0;
}
