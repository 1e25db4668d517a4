#include "simulate/synthetic_steps.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_set>

namespace argus::simulate {

using model::CollectiveOp;
using model::Phase;
using model::PhaseColumn;

namespace {

const char* const kElementwiseOps[] = {"CUDAFunctor_add<float>", "MulFunctor<float>", "GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda(float)#1}",
                                       "FillFunctor<float>", "AbsFunctor<c10::BFloat16>", "sigmoid_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}",
                                       "BinaryFunctor<float, float, float, at::native::binary_internal::DivFunctor<float> >"};
const char* const kNcclKernels[] = {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                                    "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                                    "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                                    "ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)"};

// A plausible CUDA kernel name; `variant` makes otherwise equal templates distinct.
std::string kernelName(std::mt19937_64& rng, Phase phase, int variant) {
  if (phase == Phase::kCommunication) return kNcclKernels[variant % 4];
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  const int tiles[] = {32, 64, 128, 256};
  switch (pick(phase == Phase::kOptimizer ? 2 : 9)) {
    case 0:
      return "void multi_tensor_apply_kernel<TensorListMetadata<" + std::to_string(1 + variant % 5) +
             ">, AdamFunctor<float>, float, float, float, float, float, float, adamMode_t, float>(long, int volatile*, TensorListMetadata<4>, AdamFunctor<float>, float, float, float, float, float, float, adamMode_t, float)";
    case 1:
      return "void at::native::reduce_kernel<" + std::to_string(128 << (variant % 3)) +
             ", 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)";
    case 2: {
      std::string op = kElementwiseOps[pick(7)];
      return "void at::native::vectorized_elementwise_kernel<4, at::native::" + op + ", at::detail::Array<char*, " + std::to_string(2 + variant % 3) +
             "> >(int, at::native::" + op + ", at::detail::Array<char*, " + std::to_string(2 + variant % 3) + ">)";
    }
    case 3: {
      const char* tn[] = {"nn", "nt", "tn", "tt"};
      return std::string("ampere_sgemm_") + std::to_string(tiles[pick(3)]) + "x" + std::to_string(tiles[pick(3)]) + "_" + tn[pick(4)];
    }
    case 4:
      return "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize" + std::to_string(tiles[pick(4)]) + "x" + std::to_string(tiles[pick(4)]) +
             "x32_stage" + std::to_string(3 + pick(3)) + "_warpsize2x2x1_tensor16x8x16_kernel";
    case 5:
      return "void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_" + std::to_string(tiles[pick(4)]) + "x" + std::to_string(tiles[pick(4)]) +
             "_32x3_tn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x3_tn_align8::Params)";
    case 6:
      return phase == Phase::kBackward
                 ? "void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t>, true, false, false, false>(Flash_bwd_params)"
                 : "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>, false, true, false, false, true>(Flash_fwd_params)";
    case 7:
      return "void at::native::(anonymous namespace)::" + std::string(phase == Phase::kBackward ? "layer_norm_grad_input_kernel" : "vectorized_layer_norm_kernel") +
             "<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)";
    default:
      return std::string(phase == Phase::kBackward ? "triton_red_fused__softmax_backward_data_" : "triton_poi_fused_add_mul_silu_") + std::to_string(variant);
  }
}

Phase pickPhase(std::mt19937_64& rng) {
  uint64_t x = rng() % 100;
  if (x < 45) return Phase::kForward;
  if (x < 90) return Phase::kBackward;
  if (x < 97) return Phase::kOptimizer;
  return Phase::kCommunication;
}

}  // namespace

SyntheticSteps::SyntheticSteps(uint32_t rank, int signatures, uint64_t seed, int collectives, int stacks)
    : SyntheticSteps(rank, [&] {
        SyntheticOptions o;
        o.signatures = signatures;
        o.seed = seed;
        o.collectives = collectives;
        o.stacks = stacks;
        return o;
      }()) {}

SyntheticSteps::SyntheticSteps(uint32_t rank, SyntheticOptions options)
    : rank_(rank), options_(options), rng_(options.seed * 0x9e3779b97f4a7c15ull + rank), step_(options.first_step), now_ns_(options.start_ns) {
  // The kernel mix is a property of the model, not of the rank: draw it from the seed only,
  // so that peers run the same signatures (as data-parallel ranks do).
  std::mt19937_64 model_rng(options.seed);
  std::unordered_set<uint64_t> seen;
  std::uniform_real_distribution<double> log_mean(std::log(1e3), std::log(5e6));
  for (int i = 0; static_cast<int>(kernels_.size()) < options.signatures; ++i) {
    Phase phase = pickPhase(model_rng);
    std::string name = model::normalizeKernelName(kernelName(model_rng, phase, i));
    uint32_t block = 32u << (model_rng() % 5);
    model::LaunchGeometry geo{static_cast<uint32_t>(1 + model_rng() % 4096), static_cast<uint32_t>(1 + model_rng() % 4), 1, block, 1, 1};
    uint64_t sig = model::kernelSignature(name, geo);
    if (!seen.insert(sig).second) continue;
    uint64_t shape = model_rng() % 100;
    uint32_t launches = shape < 35 ? 1 : shape < 70 ? static_cast<uint32_t>(2 + model_rng() % 11) : static_cast<uint32_t>(12 + model_rng() % 89);
    double sigma = options.jitter * (0.25 + 1.25 * static_cast<double>(model_rng() % 1000) / 1000.0);
    kernels_.push_back(Kernel{sig, phase, std::exp(log_mean(model_rng)), sigma, launches});
    dict_.kernels.push_back(model::KernelDictEntry{sig, name, geo});
  }

  const CollectiveOp ops[] = {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter, CollectiveOp::kBroadcast};
  for (int i = 0; i < options.collectives; ++i) {
    uint64_t per_op_bytes = (i % 4 == 3) ? 8u << 10 : (25ull << 20) >> (model_rng() % 4);
    collectives_.push_back(Collective{ops[i % 4], 0xc0de000000000000ull ^ (model_rng() >> 16), per_op_bytes, static_cast<uint32_t>(1 + model_rng() % 16),
                                      40.0 + static_cast<double>(model_rng() % 160), i % 2 == 0});
  }

  const char* const frames[] = {"train.py:212 train_step", "train.py:148 main", "torch/nn/modules/module.py:1511 _call_impl",
                                "megatron/core/pipeline_parallel/schedules.py:395 forward_backward_no_pipelining", "torch/autograd/__init__.py:251 backward",
                                "torch/optim/adam.py:166 step", "libcuda.so.1 cuLaunchKernel", "libc.so.6 __sched_yield",
                                "torch/utils/data/dataloader.py:630 __next__", "torch/_dynamo/convert_frame.py:491 _compile"};
  for (int i = 0; i < options.stacks; ++i) {
    uint64_t id = model_rng() | 1;  // never 0
    model::StackDictEntry e{id, {}};
    size_t depth = 2 + model_rng() % 5;
    for (size_t d = 0; d < depth; ++d) e.frames.push_back(frames[(i + d * 3 + model_rng() % 2) % 10]);
    dict_.stacks.push_back(std::move(e));
    stack_weights_.push_back(std::exp(-0.5 * i));
  }

  dict_.strings = {{1, "checkpoint"}, {2, "evaluation"}, {3, "torch._dynamo recompile"}, {4, "lr_schedule"}};
}

model::StepRecord SyntheticSteps::next() {
  model::StepRecord rec;
  rec.rank = rank_;
  rec.step = step_++;
  rec.attempt = 0;
  std::normal_distribution<double> unit(0.0, 1.0);
  std::uniform_real_distribution<double> uni(0.0, 1.0);

  // Occasionally a JIT compile introduces a new kernel signature for good.
  bool jit = rec.step > options_.first_step && uni(rng_) < options_.recompile_rate;
  if (jit) {
    int variant = static_cast<int>(kernels_.size()) + 1000;
    std::string name = "triton_poi_fused_cat_native_layer_norm_" + std::to_string(variant);
    model::LaunchGeometry geo{static_cast<uint32_t>(1 + rng_() % 1024), 1, 1, 128, 1, 1};
    uint64_t sig = model::kernelSignature(name, geo);
    kernels_.push_back(Kernel{sig, Phase::kForward, 2e4 + 1e5 * uni(rng_), options_.jitter, 1 + static_cast<uint32_t>(rng_() % 8)});
    dict_.kernels.push_back(model::KernelDictEntry{sig, name, geo});
    rec.events.push_back(model::EventRecord{model::EventKind::kNewKernelSignature, 0, sig, 0});
  }

  // Kernels: a common per-step speed factor (thermals, clocks) times per-launch jitter.
  double step_factor = std::exp(0.003 * unit(rng_));
  int64_t by_phase[8] = {};
  for (const Kernel& k : kernels_) {
    model::KernelStat ks;
    ks.signature = k.signature;
    ks.phase = k.phase;
    ks.count = k.launches;
    if (k.launches > 1 && uni(rng_) < 0.01) ks.count += (rng_() & 1) ? 1 : -1;  // data-dependent launch counts
    for (uint32_t i = 0; i < ks.count; ++i) {
      int64_t d = std::max<int64_t>(1, static_cast<int64_t>(std::llround(k.mean_ns * step_factor * std::exp(k.sigma * unit(rng_)))));
      ks.total_ns += d;
      ks.hist.add(d);
    }
    by_phase[static_cast<int>(k.phase)] += ks.total_ns;
    rec.kernels.push_back(std::move(ks));
  }

  // Collectives.
  int64_t comm_ns = 0;
  for (const Collective& c : collectives_) {
    model::CollectiveStat cs;
    cs.op = c.op;
    cs.communicator = c.communicator;
    cs.size_class = model::sizeClassOf(c.bytes);
    cs.count = c.count;
    cs.bytes = c.bytes * c.count;
    double ns = static_cast<double>(cs.bytes) / c.gbps * std::exp(0.03 * unit(rng_));
    cs.total_ns = static_cast<int64_t>(ns) + 5000 * c.count;
    cs.wait_ns = c.reports_wait ? static_cast<int64_t>(cs.total_ns * (0.05 + 0.05 * uni(rng_))) : -1;
    comm_ns += cs.total_ns;
    rec.collectives.push_back(cs);
  }

  // Phases, consistent with the kernel sums.
  int64_t compute = by_phase[static_cast<int>(Phase::kForward)] + by_phase[static_cast<int>(Phase::kBackward)] +
                    by_phase[static_cast<int>(Phase::kOptimizer)] + by_phase[static_cast<int>(Phase::kOther)];
  rec.phase(PhaseColumn::kForward) = by_phase[static_cast<int>(Phase::kForward)];
  rec.phase(PhaseColumn::kBackward) = by_phase[static_cast<int>(Phase::kBackward)];
  rec.phase(PhaseColumn::kOptimizer) = by_phase[static_cast<int>(Phase::kOptimizer)];
  rec.phase(PhaseColumn::kCompute) = compute;
  rec.phase(PhaseColumn::kCommTotal) = comm_ns + by_phase[static_cast<int>(Phase::kCommunication)];
  rec.phase(PhaseColumn::kCommExposed) = static_cast<int64_t>(rec.phase(PhaseColumn::kCommTotal) * (0.2 + 0.05 * uni(rng_)));
  rec.phase(PhaseColumn::kDataWait) = static_cast<int64_t>(2e5 * std::exp(0.3 * unit(rng_)));
  rec.phase(PhaseColumn::kLaunchGap) = static_cast<int64_t>(5e4 + 3e4 * uni(rng_));
  rec.phase(PhaseColumn::kGpuIdle) = rec.phase(PhaseColumn::kDataWait) + rec.phase(PhaseColumn::kLaunchGap);
  rec.phase(PhaseColumn::kBubble) = 0;
  rec.iter_ns = compute + rec.phase(PhaseColumn::kCommExposed) + rec.phase(PhaseColumn::kGpuIdle);
  rec.start_ns = now_ns_;
  rec.end_ns = rec.start_ns + rec.iter_ns;
  now_ns_ = rec.end_ns + static_cast<int64_t>(rng_() % 20000);

  // Sampled stacks at 100 Hz.
  double samples = static_cast<double>(rec.iter_ns) / 1e7;
  double weight_sum = 0;
  for (double w : stack_weights_) weight_sum += w;
  for (size_t i = 0; i < stack_weights_.size(); ++i) {
    double mean = samples * stack_weights_[i] / weight_sum;
    auto n = static_cast<int64_t>(std::llround(mean + std::sqrt(mean) * unit(rng_)));
    if (n > 0) rec.stacks.push_back(model::StackStat{dict_.stacks[i].stack_id, static_cast<uint32_t>(n)});
  }

  // Events: their timestamps lie inside the step.
  for (auto& e : rec.events) e.ts_ns = rec.start_ns + static_cast<int64_t>(uni(rng_) * rec.iter_ns);
  auto at = [&] { return rec.start_ns + static_cast<int64_t>(uni(rng_) * rec.iter_ns); };
  if (uni(rng_) < 0.02) rec.events.push_back(model::EventRecord{model::EventKind::kMarker, at(), 0, 1 + rng_() % 4});
  if (uni(rng_) < 0.01) rec.events.push_back(model::EventRecord{model::EventKind::kDroppedEvents, at(), 1 + rng_() % 100, 0});
  if (jit) rec.events.push_back(model::EventRecord{model::EventKind::kRecompile, at(), 0, 3});

  rec.canonicalize();
  return rec;
}

}  // namespace argus::simulate
