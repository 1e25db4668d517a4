#include "simulate/cluster_simulator.h"

#include <algorithm>
#include <cassert>
#include <bit>
#include <cmath>

#include "simulate/pipeline_schedule.h"

namespace argus::simulate {

using model::DurationHistogram;
using model::Phase;
using model::PhaseColumn;

namespace {

constexpr int kMaxFaults = 64;  // a bit per fault in Kernels::slowed_by
constexpr int kJitKernels = 4;  // new signatures a JIT stall brings
constexpr double kStackHz = 100;

// Counter-based randomness: a value per (seed, rank, step, purpose), so records come out
// the same whatever order they are built in.
uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
enum Salt : uint64_t { kRankSpeed = 1, kJob, kRankStep, kVariant, kDataWait, kStacks };
uint64_t draw(uint64_t seed, uint32_t rank, uint64_t step, Salt salt) { return mix64(seed ^ mix64((static_cast<uint64_t>(rank) << 32 | salt) ^ mix64(step))); }
double uniform(uint64_t h) { return static_cast<double>(h >> 11) * 0x1p-53; }
double normal(uint64_t h) {  // Box-Muller
  const double u = std::max(uniform(h), 0x1p-53), v = uniform(mix64(h));
  return std::sqrt(-2 * std::log(u)) * std::cos(6.283185307179586 * v);
}

// Bucket shift that scales a histogram by `factor`: bucket i spans gamma^(i-1)..gamma^i.
int32_t shiftOf(double factor) { return static_cast<int32_t>(std::lround(std::log(factor) / std::log(101.0 / 99.0))); }
int32_t shifted(int32_t index, int32_t shift) { return std::clamp(index + shift, 1, DurationHistogram::kMaxIndex); }

uint64_t commHash(uint64_t kind, uint64_t a, uint64_t b) { return mix64(kind * 0x100000001b3ull ^ mix64(a << 32 | b)); }

model::KernelDictEntry kernelEntry(std::string name, model::LaunchGeometry geo) {
  name = model::normalizeKernelName(name);
  return model::KernelDictEntry{model::kernelSignature(name, geo), name, geo};
}

}  // namespace

// Per rank and step: what the first pass decides (kernel choice, compute) and the timeline
// adds (communication, waits, bubble).
struct ClusterSimulator::RankStep {
  int32_t shift = 0;  // the rank's speed this step, in buckets
  uint32_t variant = 0;
  int64_t fwd_ns = 0, bwd_ns = 0, opt_ns = 0, other_ns = 0;  // fwd includes JIT kernels
  int64_t data_wait_ns = 0, stall_ns = 0;
  int64_t tp_xfer_ns = 0, tp_wait_ns = 0;
  int64_t pp_next_ns = 0, pp_prev_ns = 0;  // transfers with the next / previous stage
  int64_t dp_xfer_ns = 0, dp_wait_ns = 0;
  int64_t bubble_ns = 0;
  int64_t tail() const { return opt_ns + other_ns; }
};

struct ClusterSimulator::StepTimes {
  int64_t start_ns = 0, iter_ns = 0;
  bool checkpoint = false;
};

struct ClusterSimulator::Kernels {
  std::vector<int64_t> rep;           // DurationHistogram::representative per bucket index
  std::vector<uint64_t> slowed_by;    // per mix kernel: a bit per fault that slows it
  std::vector<int32_t> fault_shift;   // per fault: its severity in buckets
  std::vector<int32_t> jit_first;     // per fault: its first kernel in kernels_ (JIT), else -1
  int32_t jit_bucket[kJitKernels] = {};
  uint64_t tp_sig = 0, dp_sig = 0, pp_sig = 0;
  uint64_t stack_fwd = 0, stack_bwd = 0, stack_opt = 0, stack_comm = 0, stack_data = 0, stack_compile = 0;
  static constexpr uint64_t kNameCheckpoint = 1, kNameRecompile = 2;
};

Result<std::unique_ptr<ClusterSimulator>> ClusterSimulator::create(ClusterOptions options, KernelMix mix) {
  ARGUS_RETURN_IF_ERROR(options.layout.validate());
  if (options.microbatches == 0 || options.microbatches > 1024) return Status::invalidArgument("microbatches: 1 to 1024");
  if (mix.kernels.empty() || mix.variants == 0) return Status::invalidArgument("kernel mix '" + mix.source + "' holds no kernels");
  if (options.faults.size() > kMaxFaults) return Status::invalidArgument("at most " + std::to_string(kMaxFaults) + " faults");
  if (!(options.nvlink_gbps > 0) || !(options.network_gbps > 0)) return Status::invalidArgument("bandwidths must be positive");
  for (size_t i = 0; i < options.faults.size(); ++i) {
    ARGUS_RETURN_IF_ERROR(resolveFault(&options.faults[i], options.layout, options.seed + i));
  }
  return std::unique_ptr<ClusterSimulator>(new ClusterSimulator(std::move(options), std::move(mix)));
}

ClusterSimulator::~ClusterSimulator() = default;

ClusterSimulator::ClusterSimulator(ClusterOptions options, KernelMix mix) : options_(std::move(options)), mix_(std::move(mix)), k_(std::make_unique<Kernels>()) {
  clock_ns_ = options_.start_ns;
  Kernels& k = *k_;
  k.rep.resize(DurationHistogram::kMaxIndex + 1);
  for (int32_t i = 0; i <= DurationHistogram::kMaxIndex; ++i) k.rep[i] = DurationHistogram::representative(i);

  for (const MixKernel& m : mix_.kernels) kernels_.push_back(m.entry);
  k.slowed_by.assign(mix_.kernels.size(), 0);
  for (size_t f = 0; f < options_.faults.size(); ++f) {
    const Fault& fault = options_.faults[f];
    k.fault_shift.push_back(shiftOf(1 + fault.severity));
    k.jit_first.push_back(-1);
    const bool slows = fault.kind == FaultKind::kComputeStraggler || fault.kind == FaultKind::kMaskedStraggler || fault.kind == FaultKind::kPipelineBubble;
    for (size_t j = 0; slows && j < mix_.kernels.size(); ++j) {
      if (fault.kernel.empty() || mix_.kernels[j].entry.name.find(fault.kernel) != std::string::npos) k.slowed_by[j] |= uint64_t{1} << f;
    }
    if (fault.kind == FaultKind::kJitStall) {
      k.jit_first.back() = static_cast<int32_t>(kernels_.size());
      for (int i = 0; i < kJitKernels; ++i) {
        kernels_.push_back(kernelEntry("triton_poi_fused_native_layer_norm_view_" + std::to_string(f * kJitKernels + i), {uint32_t(256 << i), 1, 1, 128, 1, 1}));
      }
    }
  }
  for (int i = 0; i < kJitKernels; ++i) k.jit_bucket[i] = DurationHistogram::bucketOf(30'000 + 15'000 * i);

  const model::KernelDictEntry tp = kernelEntry("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", {24, 1, 1, 640, 1, 1});
  const model::KernelDictEntry dp = kernelEntry("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", {32, 1, 1, 512, 1, 1});
  const model::KernelDictEntry pp = kernelEntry("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", {2, 1, 1, 640, 1, 1});
  k.tp_sig = tp.signature;
  k.dp_sig = dp.signature;
  k.pp_sig = pp.signature;
  kernels_.insert(kernels_.end(), {tp, dp, pp});

  auto stack = [&](uint64_t id, std::vector<std::string> frames) {
    stacks_.push_back(model::StackDictEntry{id, std::move(frames)});
    return id;
  };
  const std::string loop = "pretrain_gpt.py:290 train_step", main = "pretrain_gpt.py:412 main";
  k.stack_fwd = stack(0x51a0001, {"libcuda.so.1 cuLaunchKernel", "torch/nn/modules/module.py:1511 _call_impl", "megatron/core/pipeline_parallel/schedules.py:395 forward_step", loop, main});
  k.stack_bwd = stack(0x51a0002, {"libcuda.so.1 cuLaunchKernel", "torch/autograd/graph.py:744 _engine_run_backward", "megatron/core/pipeline_parallel/schedules.py:442 backward_step", loop, main});
  k.stack_opt = stack(0x51a0003, {"torch/optim/adam.py:166 step", "megatron/core/optimizer/optimizer.py:461 step", loop, main});
  k.stack_comm = stack(0x51a0004, {"libc.so.6 __sched_yield", "libcuda.so.1 cuStreamSynchronize", "torch/distributed/distributed_c10d.py:2050 all_reduce", loop, main});
  k.stack_data = stack(0x51a0005, {"torch/utils/data/dataloader.py:630 __next__", "megatron/training/utils.py:301 get_batch", loop, main});
  k.stack_compile = stack(0x51a0006, {"triton/compiler/compiler.py:283 compile", "torch/_inductor/codecache.py:2781 load_by_key_path", "torch/_inductor/compile_fx.py:1231 compile_fx",
                                      "torch/_dynamo/convert_frame.py:491 _compile", loop, main});
  strings_ = {{Kernels::kNameCheckpoint, "checkpoint"}, {Kernels::kNameRecompile, "torch._dynamo recompile"}};

  const uint32_t ranks = layout().ranks();
  rank_speed_.resize(ranks);
  for (uint32_t r = 0; r < ranks; ++r) rank_speed_[r] = std::exp(options_.rank_spread * normal(draw(options_.seed, r, 0, kRankSpeed)));
}

void ClusterSimulator::computeRank(uint32_t rank, uint64_t step, RankStep* rs) const {
  const ClusterOptions& o = options_;
  const Kernels& k = *k_;
  double factor = rank_speed_[rank] * std::exp(o.job_jitter * normal(draw(o.seed, 0, step, kJob)) + o.step_jitter * normal(draw(o.seed, rank, step, kRankStep)));
  if (o.warmup_steps > 0) factor *= 1 + std::exp(-4.0 * static_cast<double>(step) / static_cast<double>(o.warmup_steps));
  *rs = RankStep{};
  rs->shift = shiftOf(factor);
  rs->variant = static_cast<uint32_t>(draw(o.seed, rank, step, kVariant) % mix_.variants);
  uint64_t faults_here = 0;  // faults that slow this rank's kernels now
  for (size_t f = 0; f < o.faults.size(); ++f) {
    const Fault& fault = o.faults[f];
    if (!fault.activeAt(step)) continue;
    if ((fault.rank && *fault.rank == rank) || (fault.stage && *fault.stage == layout().ppRank(rank))) faults_here |= uint64_t{1} << f;
  }
  const int64_t m = o.microbatches;
  for (size_t j = 0; j < mix_.kernels.size(); ++j) {
    int32_t shift = rs->shift;
    for (uint64_t bits = k.slowed_by[j] & faults_here; bits != 0; bits &= bits - 1) shift += k.fault_shift[std::countr_zero(bits)];
    int64_t ns = 0;
    for (const auto& b : mix_.kernels[j].variants[rs->variant]) ns += k.rep[shifted(b.index, shift)] * b.count;
    switch (mix_.kernels[j].phase) {
      case Phase::kForward: rs->fwd_ns += ns * m; break;
      case Phase::kBackward: rs->bwd_ns += ns * m; break;
      case Phase::kOptimizer: rs->opt_ns += ns; break;
      default: rs->other_ns += ns; break;
    }
  }
  const int64_t compute = rs->fwd_ns + rs->bwd_ns + rs->opt_ns + rs->other_ns;
  for (size_t f = 0; f < o.faults.size(); ++f) {
    const Fault& fault = o.faults[f];
    if (fault.kind != FaultKind::kJitStall || *fault.rank != rank || step < fault.from_step) continue;
    for (int i = 0; i < kJitKernels; ++i) rs->fwd_ns += k.rep[shifted(k.jit_bucket[i], rs->shift)] * m;  // new kernels, for good
    if (fault.activeAt(step)) rs->stall_ns += static_cast<int64_t>(fault.severity * static_cast<double>(compute));
  }
  rs->data_wait_ns = static_cast<int64_t>(300'000 * std::exp(0.3 * normal(draw(o.seed, rank, step, kDataWait))));
}

void ClusterSimulator::simulate(uint32_t steps) {
  const uint32_t ranks = layout().ranks();
  block_first_ += block_steps_;
  block_steps_ = steps;
  block_.resize(static_cast<size_t>(steps) * ranks);
  steps_.resize(steps);
  for (uint32_t i = 0; i < steps; ++i) {
    RankStep* rs = &block_[static_cast<size_t>(i) * ranks];
    for (uint32_t r = 0; r < ranks; ++r) computeRank(r, block_first_ + i, &rs[r]);
    timeStep(block_first_ + i, rs, &steps_[i]);
  }
}

void ClusterSimulator::timeStep(uint64_t step, RankStep* rs, StepTimes* times) {
  const ClusterOptions& o = options_;
  const ClusterLayout& l = layout();
  const uint32_t T = l.tp, P = l.pp, D = l.dp;
  const int64_t m = o.microbatches;

  // Bandwidth this step: a masked straggler's NCCL kernels run at its pace; degraded links.
  std::vector<std::pair<const Fault*, double>> links;
  std::vector<double> rank_div(l.ranks(), 1.0);
  for (const Fault& f : o.faults) {
    if (!f.activeAt(step)) continue;
    if (f.kind == FaultKind::kMaskedStraggler) rank_div[*f.rank] *= 1 + f.severity;
    if (f.kind == FaultKind::kLinkDegradation) links.emplace_back(&f, 1 + f.severity);
  }
  auto linkGbps = [&](uint32_t a, uint32_t b) {  // ranks a and b
    const uint32_t ha = l.hostOf(a), hb = l.hostOf(b);
    double gbps = ha == hb ? o.nvlink_gbps : o.network_gbps;
    for (const auto& [f, div] : links) {
      if (ha != hb && std::pair{std::min(ha, hb), std::max(ha, hb)} == *f->hosts) gbps /= div;
    }
    return gbps / std::max(rank_div[a], rank_div[b]);
  };
  // A ring all-reduce of `bytes` over n members (member(i): the i-th rank in ring order):
  // each link carries 2(n-1)/n of the bytes, and the ring moves at its slowest link's pace.
  // own[i]: what member i's own two links would take; the rest of the ring's time it waits
  // for a slower link elsewhere. That is the split the NCCL profiler's proxy states give
  // (SendPeerWait, RecvWait): only the ends of a slow link see their transfer slow down.
  std::vector<double> edge(std::max(T, D));
  std::vector<int64_t> own(std::max(T, D));
  auto ring = [&](uint32_t n, uint64_t bytes, auto member) -> int64_t {
    auto ns = [&](double gbps) { return o.latency_ns + static_cast<int64_t>(2.0 * (n - 1) / n * static_cast<double>(bytes) / gbps); };
    if (n < 2) {
      own[0] = 0;
      return 0;
    }
    double slowest = o.nvlink_gbps;
    for (uint32_t i = 0; i < n; ++i) {
      edge[i] = linkGbps(member(i), member((i + 1) % n));
      slowest = std::min(slowest, edge[i]);
    }
    for (uint32_t i = 0; i < n; ++i) own[i] = ns(std::min(edge[i], edge[(i + n - 1) % n]));
    return ns(slowest);
  };

  // Tensor-parallel groups, then each replica's pipeline.
  std::vector<int64_t> stage_end(static_cast<size_t>(P) * D);  // [k * D + d]: last backward done
  std::vector<int64_t> F(P), B(P), S(P), X(P);                // per stage of one replica
  PipelineSchedule schedule(P, static_cast<uint32_t>(m));
  for (uint32_t d = 0; d < D; ++d) {
    for (uint32_t k = 0; k < P; ++k) {
      int64_t f_max = 0, b_max = 0, ready = 0;
      for (uint32_t t = 0; t < T; ++t) {
        const RankStep& x = rs[l.rankOf(t, k, d)];
        f_max = std::max(f_max, x.fwd_ns / m);
        b_max = std::max(b_max, x.bwd_ns / m);
        ready = std::max(ready, x.data_wait_ns + x.stall_ns);
      }
      const int64_t tp_ns = ring(T, o.tp_bytes, [&](uint32_t t) { return l.rankOf(t, k, d); });
      F[k] = f_max + tp_ns;
      B[k] = b_max + tp_ns;
      S[k] = ready;
      X[k] = 0;
      for (uint32_t t = 0; t < T; ++t) {
        RankStep& x = rs[l.rankOf(t, k, d)];
        x.tp_xfer_ns = 2 * m * own[t];
        x.tp_wait_ns = m * (f_max - x.fwd_ns / m + b_max - x.bwd_ns / m) + 2 * m * (tp_ns - own[t]) + ready - (x.data_wait_ns + x.stall_ns);
        if (k + 1 < P) {
          const uint32_t a = l.rankOf(t, k, d), b = l.rankOf(t, k + 1, d);
          const int64_t ns = o.latency_ns + static_cast<int64_t>(static_cast<double>(o.pp_bytes) / linkGbps(a, b));
          X[k] = std::max(X[k], ns);
          rs[a].pp_next_ns = 2 * m * ns;  // activations out, gradients back
          rs[b].pp_prev_ns = 2 * m * ns;
        }
      }
    }
    schedule.run(F.data(), B.data(), S.data(), X.data());
    for (uint32_t k = 0; k < P; ++k) {
      const int64_t end = schedule.stageEnd(k);
      stage_end[static_cast<size_t>(k) * D + d] = end;
      for (uint32_t t = 0; t < T; ++t) rs[l.rankOf(t, k, d)].bubble_ns = end - S[k] - m * (F[k] + B[k]);
    }
  }

  // Gradient all-reduce over each data-parallel ring, then the optimizer.
  int64_t step_end = 0;
  for (uint32_t k = 0; k < P; ++k) {
    int64_t start = 0;
    for (uint32_t d = 0; d < D; ++d) start = std::max(start, stage_end[static_cast<size_t>(k) * D + d]);
    for (uint32_t t = 0; t < T; ++t) {
      const int64_t ns = ring(D, o.dp_bytes, [&](uint32_t d) { return l.rankOf(t, k, d); });
      for (uint32_t d = 0; d < D; ++d) {
        RankStep& x = rs[l.rankOf(t, k, d)];
        x.dp_wait_ns = start - stage_end[static_cast<size_t>(k) * D + d] + (ns - own[d]);
        x.dp_xfer_ns = own[d];
        step_end = std::max(step_end, start + ns + x.tail());
      }
    }
  }
  times->checkpoint = o.checkpoint_every > 0 && step > 0 && step % o.checkpoint_every == 0;
  times->start_ns = clock_ns_;
  times->iter_ns = step_end + (times->checkpoint ? o.checkpoint_ns : 0);
  clock_ns_ += times->iter_ns;
}

void ClusterSimulator::record(uint32_t rank, uint32_t i, model::StepRecord* rec) const {
  assert(rank < layout().ranks() && i < block_steps_);
  const ClusterOptions& o = options_;
  const Kernels& k = *k_;
  const RankStep& rs = block_[static_cast<size_t>(i) * layout().ranks() + rank];
  const StepTimes& st = steps_[i];
  const uint64_t step = block_first_ + i;
  const int64_t m = o.microbatches;
  rec->rank = rank;
  rec->step = step;
  rec->attempt = 0;
  rec->flags = 0;
  rec->start_ns = st.start_ns;
  rec->iter_ns = st.iter_ns;
  rec->end_ns = st.start_ns + st.iter_ns;

  // Kernels: the mix's, shifted to this rank's speed (and its faults), then the JIT ones.
  uint64_t faults_here = 0;
  for (size_t f = 0; f < o.faults.size(); ++f) {
    const Fault& fault = o.faults[f];
    if (fault.activeAt(step) && ((fault.rank && *fault.rank == rank) || (fault.stage && *fault.stage == layout().ppRank(rank)))) faults_here |= uint64_t{1} << f;
  }
  size_t n = 0;
  auto nextKernel = [&]() -> model::KernelStat& {
    if (n == rec->kernels.size()) rec->kernels.emplace_back();
    return rec->kernels[n++];
  };
  thread_local std::vector<DurationHistogram::Bucket> buckets;
  auto fill = [&](model::KernelStat& ks, uint64_t signature, Phase phase) {
    ks.signature = signature;
    ks.phase = phase;
    ks.count = 0;
    ks.total_ns = 0;
    for (const auto& b : buckets) {
      ks.count += b.count;
      ks.total_ns += k.rep[b.index] * b.count;
    }
    Status ok = ks.hist.assignFrom(buckets);
    assert(ok.isOk());
    (void)ok;
  };
  for (size_t j = 0; j < mix_.kernels.size(); ++j) {
    const MixKernel& mk = mix_.kernels[j];
    const auto& source = mk.variants[rs.variant];
    if (source.empty()) continue;
    int32_t shift = rs.shift;
    for (uint64_t bits = k.slowed_by[j] & faults_here; bits != 0; bits &= bits - 1) shift += k.fault_shift[std::countr_zero(bits)];
    const uint32_t times = mk.perMicrobatch() ? static_cast<uint32_t>(m) : 1;
    buckets.clear();
    for (const auto& b : source) {
      const int32_t index = shifted(b.index, shift);
      if (!buckets.empty() && buckets.back().index == index) {
        buckets.back().count += b.count * times;  // clamped onto the last bucket
      } else {
        buckets.push_back({index, b.count * times});
      }
    }
    fill(nextKernel(), mk.entry.signature, mk.phase);
  }
  bool compiling = false;
  for (size_t f = 0; f < o.faults.size(); ++f) {
    const Fault& fault = o.faults[f];
    if (fault.kind != FaultKind::kJitStall || *fault.rank != rank || step < fault.from_step) continue;
    compiling |= fault.activeAt(step);
    for (int j = 0; j < kJitKernels; ++j) {
      buckets.assign(1, {shifted(k.jit_bucket[j], rs.shift), static_cast<uint32_t>(m)});
      fill(nextKernel(), kernels_[k.jit_first[f] + j].signature, Phase::kForward);
    }
  }
  // NCCL kernels: their time is the collectives' (transfer plus waiting for late peers).
  auto nccl = [&](uint64_t signature, int64_t total_ns, int64_t calls) {
    if (total_ns <= 0 || calls <= 0) return;
    buckets.assign(1, {DurationHistogram::bucketOf(total_ns / calls), static_cast<uint32_t>(calls)});
    fill(nextKernel(), signature, Phase::kCommunication);
  };
  nccl(k.tp_sig, rs.tp_xfer_ns + rs.tp_wait_ns, 2 * m);
  nccl(k.dp_sig, rs.dp_xfer_ns + rs.dp_wait_ns, 1);
  const int64_t pp_calls = (rs.pp_next_ns > 0 ? 2 * m : 0) + (rs.pp_prev_ns > 0 ? 2 * m : 0);
  nccl(k.pp_sig, rs.pp_next_ns + rs.pp_prev_ns, pp_calls);
  rec->kernels.resize(n);

  // Collectives.
  const ClusterLayout& l = layout();
  const uint32_t t = l.tpRank(rank), pp = l.ppRank(rank), d = l.dpRank(rank);
  rec->collectives.clear();
  auto collective = [&](model::CollectiveOp op, uint64_t comm, uint64_t bytes, uint32_t count, int64_t total_ns, int64_t wait_ns, uint32_t peer) {
    model::CollectiveStat c;
    c.op = op;
    c.communicator = comm;
    c.size_class = model::sizeClassOf(bytes / count);
    c.peer_rank = peer;
    c.count = count;
    c.bytes = bytes;
    c.total_ns = total_ns;
    c.wait_ns = wait_ns;
    rec->collectives.push_back(c);
  };
  constexpr uint32_t kNoPeer = model::CollectiveStat::kNoPeer;
  if (l.tp > 1) collective(model::CollectiveOp::kAllReduce, commHash(1, pp, d), o.tp_bytes * 2 * m, static_cast<uint32_t>(2 * m), rs.tp_xfer_ns + rs.tp_wait_ns, rs.tp_wait_ns, kNoPeer);
  if (l.dp > 1) collective(model::CollectiveOp::kAllReduce, commHash(2, t, pp), o.dp_bytes, 1, rs.dp_xfer_ns + rs.dp_wait_ns, rs.dp_wait_ns, kNoPeer);
  for (int dir = 0; dir < 2; ++dir) {  // 0: the next stage, 1: the previous
    const int64_t ns = dir == 0 ? rs.pp_next_ns : rs.pp_prev_ns;
    if (ns <= 0) continue;
    const uint32_t peer = l.rankOf(t, dir == 0 ? pp + 1 : pp - 1, d);
    const uint64_t comm = commHash(3, std::min(rank, peer), std::max(rank, peer));
    collective(model::CollectiveOp::kSend, comm, o.pp_bytes * m, static_cast<uint32_t>(m), ns / 2, -1, peer);
    collective(model::CollectiveOp::kRecv, comm, o.pp_bytes * m, static_cast<uint32_t>(m), ns / 2, -1, peer);
  }

  // Phases.
  const int64_t compute = rs.fwd_ns + rs.bwd_ns + rs.opt_ns + rs.other_ns;
  const int64_t exposed = rs.tp_xfer_ns + rs.tp_wait_ns + rs.dp_xfer_ns + rs.dp_wait_ns;
  const int64_t idle = std::max<int64_t>(0, st.iter_ns - compute - exposed);
  rec->phase(PhaseColumn::kForward) = rs.fwd_ns;
  rec->phase(PhaseColumn::kBackward) = rs.bwd_ns;
  rec->phase(PhaseColumn::kOptimizer) = rs.opt_ns;
  rec->phase(PhaseColumn::kDataWait) = rs.data_wait_ns;
  rec->phase(PhaseColumn::kCompute) = compute;
  rec->phase(PhaseColumn::kCommTotal) = exposed + rs.pp_next_ns + rs.pp_prev_ns;
  rec->phase(PhaseColumn::kCommExposed) = exposed;
  rec->phase(PhaseColumn::kGpuIdle) = idle;
  rec->phase(PhaseColumn::kBubble) = rs.bubble_ns;
  rec->phase(PhaseColumn::kLaunchGap) = std::min(idle, compute / 200);

  // CPU stacks sampled at 100 Hz: where the training thread was.
  rec->stacks.clear();
  uint64_t h = draw(o.seed, rank, step, kStacks);
  auto samples = [&](uint64_t id, int64_t ns) {
    h = mix64(h);
    const auto count = static_cast<uint32_t>(static_cast<double>(ns) * kStackHz / 1e9 + uniform(h));
    if (count > 0) rec->stacks.push_back(model::StackStat{id, count});
  };
  samples(k.stack_fwd, rs.fwd_ns);
  samples(k.stack_bwd, rs.bwd_ns);
  samples(k.stack_opt, rs.opt_ns + rs.other_ns);
  samples(k.stack_comm, exposed + rs.bubble_ns);
  samples(k.stack_data, rs.data_wait_ns);
  samples(k.stack_compile, rs.stall_ns);

  // Events: a checkpoint marker; a JIT fault's new signatures at its onset, recompiles while it lasts.
  rec->events.clear();
  if (st.checkpoint) rec->events.push_back(model::EventRecord{model::EventKind::kMarker, rec->end_ns - o.checkpoint_ns, 0, Kernels::kNameCheckpoint});
  for (size_t f = 0; f < o.faults.size(); ++f) {
    const Fault& fault = o.faults[f];
    if (fault.kind != FaultKind::kJitStall || *fault.rank != rank || step != fault.from_step) continue;
    for (int j = 0; j < kJitKernels; ++j) {
      rec->events.push_back(model::EventRecord{model::EventKind::kNewKernelSignature, rec->start_ns + j, kernels_[k.jit_first[f] + j].signature, 0});
    }
  }
  if (compiling) rec->events.push_back(model::EventRecord{model::EventKind::kRecompile, rec->start_ns, 0, Kernels::kNameRecompile});
  rec->canonicalize();
}

}  // namespace argus::simulate
