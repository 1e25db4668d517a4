// The cluster simulator: records a shim would send, consistent phases, and each fault's
// symptoms where the diagnosis will look for them (and not elsewhere).
#include "simulate/cluster_simulator.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>

using namespace argus;
using namespace argus::simulate;
using model::PhaseColumn;
using model::StepRecord;

namespace {

ClusterOptions smallJob(uint32_t tp = 2, uint32_t pp = 4, uint32_t dp = 4) {
  ClusterOptions o;
  o.layout = ClusterLayout{tp, pp, dp, 4};
  o.microbatches = 8;
  o.warmup_steps = 0;
  return o;
}

std::unique_ptr<ClusterSimulator> make(ClusterOptions o, std::vector<std::string> faults = {}) {
  for (const std::string& spec : faults) {
    Result<Fault> f = parseFault(spec);
    REQUIRE_MESSAGE(f.isOk(), f.status().toString());
    o.faults.push_back(*f);
  }
  auto sim = ClusterSimulator::create(o, builtinKernelMix(16));
  REQUIRE_MESSAGE(sim.isOk(), sim.status().toString());
  return std::move(sim).value();
}

// Every rank's record of steps [0, steps), by [step][rank].
std::vector<std::vector<StepRecord>> run(ClusterSimulator& sim, uint32_t steps) {
  std::vector<std::vector<StepRecord>> out(steps, std::vector<StepRecord>(sim.layout().ranks()));
  sim.simulate(steps);
  for (uint32_t i = 0; i < steps; ++i) {
    for (uint32_t r = 0; r < sim.layout().ranks(); ++r) sim.record(r, i, &out[i][r]);
  }
  return out;
}

int64_t phase(const StepRecord& r, PhaseColumn c) { return r.phase(c); }

const model::CollectiveStat* find(const StepRecord& r, model::CollectiveOp op, uint32_t peer = model::CollectiveStat::kNoPeer, bool tp = false) {
  // Two all-reduces: tensor-parallel (2 * microbatches calls) and data-parallel (1 call).
  for (const model::CollectiveStat& c : r.collectives) {
    if (c.op == op && c.peer_rank == peer && (op != model::CollectiveOp::kAllReduce || (c.count > 1) == tp)) return &c;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("layout: Megatron rank order, hosts, and bad layouts refused") {
  ClusterLayout l{2, 4, 4, 4};
  CHECK(l.ranks() == 32);
  CHECK(l.hosts() == 8);
  for (uint32_t r = 0; r < l.ranks(); ++r) {
    CHECK(l.rankOf(l.tpRank(r), l.ppRank(r), l.dpRank(r)) == r);
    model::RankTopology t = l.topology(r);
    CHECK(t.host == ClusterLayout::hostName(r / 4));
    CHECK(t.tp_size * t.pp_size * t.dp_size == 32);
  }
  CHECK(l.rankOf(1, 2, 3) == 1 + 2 * (3 + 4 * 2));
  CHECK(ClusterLayout{3, 1, 1, 8}.validate().code() == Status::Code::kInvalidArgument);
  CHECK(ClusterLayout{0, 1, 1, 8}.validate().code() == Status::Code::kInvalidArgument);
  CHECK(ClusterLayout{1024, 1024, 2, 8}.validate().code() == Status::Code::kInvalidArgument);
  CHECK(ClusterLayout{16, 2, 2, 8}.validate().isOk());
}

TEST_CASE("fault specs: parsed, defaults, and clear errors") {
  Result<Fault> f = parseFault("compute_straggler:rank=17,at=300,for=100,severity=0.5,kernel=gemm");
  REQUIRE(f.isOk());
  CHECK(f->kind == FaultKind::kComputeStraggler);
  CHECK(*f->rank == 17);
  CHECK(f->from_step == 300);
  CHECK(f->steps == 100);
  CHECK(f->severity == 0.5);
  CHECK(f->kernel == "gemm");
  CHECK(f->activeAt(300));
  CHECK(f->activeAt(399));
  CHECK_FALSE(f->activeAt(400));
  Result<Fault> link = parseFault("link_degradation:at=5,hosts=7-3");
  REQUIRE(link.isOk());
  CHECK(link->hosts == std::pair<uint32_t, uint32_t>{3, 7});
  CHECK(link->severity == Fault::defaultSeverity(FaultKind::kLinkDegradation));
  for (const char* bad : {"slow_rank:at=3", "compute_straggler", "compute_straggler:at=x", "compute_straggler:at=3,severity=nan", "compute_straggler:at=3,severity=0",
                          "compute_straggler:at=3,stage=1", "link_degradation:at=3,hosts=3", "pipeline_bubble:at=3,rank=2", "jit_stall:at=3,kernel=gemm",
                          "compute_straggler:at=3,color=red", "compute_straggler:at=3,rank"}) {
    CAPTURE(bad);
    Result<Fault> r = parseFault(bad);
    REQUIRE_FALSE(r.isOk());
    CHECK(r.status().code() == Status::Code::kInvalidArgument);
    CHECK(r.status().message().find("fault '") != std::string::npos);
  }
  ClusterLayout one_host{2, 1, 4, 8};
  Fault l = *parseFault("link_degradation:at=1");
  CHECK(resolveFault(&l, one_host, 1).code() == Status::Code::kInvalidArgument);
  Fault p = *parseFault("pipeline_bubble:at=1");
  CHECK(resolveFault(&p, one_host, 1).code() == Status::Code::kInvalidArgument);
  Fault r = *parseFault("jit_stall:at=1,rank=8");
  CHECK(resolveFault(&r, one_host, 1).code() == Status::Code::kInvalidArgument);
  Fault drawn = *parseFault("link_degradation:at=1");
  ClusterLayout l8{2, 4, 4, 4};
  REQUIRE(resolveFault(&drawn, l8, 7).isOk());
  CHECK(drawn.hosts->first < drawn.hosts->second);
  CHECK(drawn.hosts->second < l8.hosts());
}

TEST_CASE("records are deterministic, whatever order they are built in") {
  auto a = make(smallJob(), {"compute_straggler:rank=5,at=2"});
  auto b = make(smallJob(), {"compute_straggler:rank=5,at=2"});
  auto ra = run(*a, 6);
  b->simulate(6);
  for (uint32_t r = b->layout().ranks(); r-- > 0;) {
    for (uint32_t i = 6; i-- > 0;) {
      StepRecord rec;
      b->record(r, i, &rec);
      CHECK(rec == ra[i][r]);
    }
  }
}

TEST_CASE("phases add up, kernels match phases, every rank's step has the same time") {
  auto sim = make(smallJob());
  auto steps = run(*sim, 8);
  for (const auto& step : steps) {
    for (const StepRecord& r : step) {
      CHECK(r.iter_ns == step[0].iter_ns);
      CHECK(r.end_ns - r.start_ns == r.iter_ns);
      CHECK(phase(r, PhaseColumn::kCompute) >= phase(r, PhaseColumn::kForward) + phase(r, PhaseColumn::kBackward) + phase(r, PhaseColumn::kOptimizer));
      CHECK(phase(r, PhaseColumn::kCompute) + phase(r, PhaseColumn::kCommExposed) + phase(r, PhaseColumn::kGpuIdle) == r.iter_ns);
      CHECK(phase(r, PhaseColumn::kGpuIdle) >= phase(r, PhaseColumn::kBubble));
      std::map<model::Phase, int64_t> by_phase;
      for (const model::KernelStat& k : r.kernels) {
        CHECK(k.hist.count() == k.count);
        CHECK(k.total_ns == k.hist.sketchTotal());
        by_phase[k.phase] += k.total_ns;
      }
      CHECK(by_phase[model::Phase::kForward] == phase(r, PhaseColumn::kForward));
      CHECK(by_phase[model::Phase::kBackward] == phase(r, PhaseColumn::kBackward));
      CHECK(by_phase[model::Phase::kCommunication] >= 0.98 * static_cast<double>(phase(r, PhaseColumn::kCommExposed)));
      CHECK(find(r, model::CollectiveOp::kAllReduce, model::CollectiveStat::kNoPeer, true) != nullptr);   // tensor-parallel
      CHECK(find(r, model::CollectiveOp::kAllReduce, model::CollectiveStat::kNoPeer, false) != nullptr);  // data-parallel
    }
  }
  // Steps follow one another; the first and last stages send to one neighbour, the others two.
  CHECK(steps[1][0].start_ns == steps[0][0].end_ns);
  const ClusterLayout& l = sim->layout();
  for (uint32_t r = 0; r < l.ranks(); ++r) {
    size_t sends = std::count_if(steps[0][r].collectives.begin(), steps[0][r].collectives.end(), [](const auto& c) { return c.op == model::CollectiveOp::kSend; });
    CHECK(sends == (l.ppRank(r) == 0 || l.ppRank(r) + 1 == l.pp ? 1u : 2u));
  }
}

TEST_CASE("compute straggler: its compute grows, its peers wait for it, it waits least") {
  const uint32_t slow = 13;  // tensor-parallel rank 1 of stage 1, replica 2
  auto base = make(smallJob());
  auto sim = make(smallJob(), {"compute_straggler:rank=13,at=4,for=4,severity=0.3"});
  auto before = run(*base, 10), after = run(*sim, 10);
  const ClusterLayout& l = sim->layout();
  for (uint32_t i : {5u, 6u}) {
    const StepRecord& s = after[i][slow];
    CHECK(phase(s, PhaseColumn::kCompute) > 1.25 * phase(before[i][slow], PhaseColumn::kCompute));
    CHECK(after[i][0].iter_ns > before[i][0].iter_ns);
    // Its tensor-parallel partner and its data-parallel peers wait; it does not.
    const uint32_t partner = l.rankOf(1 - l.tpRank(slow), l.ppRank(slow), l.dpRank(slow));
    CHECK(find(after[i][partner], model::CollectiveOp::kAllReduce, model::CollectiveStat::kNoPeer, true)->wait_ns >
          find(s, model::CollectiveOp::kAllReduce, model::CollectiveStat::kNoPeer, true)->wait_ns);
    const uint32_t dp_peer = l.rankOf(l.tpRank(slow), l.ppRank(slow), (l.dpRank(slow) + 1) % l.dp);
    CHECK(find(after[i][dp_peer], model::CollectiveOp::kAllReduce)->wait_ns > find(s, model::CollectiveOp::kAllReduce)->wait_ns + 1'000'000);
    CHECK(phase(after[i][dp_peer], PhaseColumn::kCompute) < 1.05 * phase(before[i][dp_peer], PhaseColumn::kCompute));
  }
  // Before the onset and after the end, nothing differs.
  CHECK(after[3][slow] == before[3][slow]);
  CHECK(after[8][slow].kernels == before[8][slow].kernels);
  CHECK(after[8][slow].phase_ns == before[8][slow].phase_ns);
}

TEST_CASE("masked straggler: slow compute, and the collectives it joins lose bandwidth") {
  auto base = make(smallJob());
  auto sim = make(smallJob(), {"masked_straggler:rank=13,at=0,severity=0.5"});
  auto before = run(*base, 3), after = run(*sim, 3);
  const ClusterLayout& l = sim->layout();
  // Its data-parallel ring: ranks 9, 11 (host 2), 13, 15 (host 3). 11 -> 13 crosses hosts,
  // so 13 and 11 move data at 13's pace; 15 and 9 wait for them.
  const uint32_t ring_prev = l.rankOf(l.tpRank(13), l.ppRank(13), l.dpRank(13) - 1);
  CHECK(ring_prev == 11);
  for (uint32_t rank : {13u, ring_prev}) {
    const auto* a = find(after[1][rank], model::CollectiveOp::kAllReduce);
    const auto* b = find(before[1][rank], model::CollectiveOp::kAllReduce);
    CHECK(a->total_ns - a->wait_ns > 1.4 * static_cast<double>(b->total_ns - b->wait_ns));  // transfer time
  }
  CHECK(find(after[1][15], model::CollectiveOp::kAllReduce)->wait_ns > find(before[1][15], model::CollectiveOp::kAllReduce)->wait_ns);
  CHECK(phase(after[1][13], PhaseColumn::kCompute) > 1.4 * phase(before[1][13], PhaseColumn::kCompute));
}

TEST_CASE("link degradation: transfers across the link slow down, compute does not") {
  ClusterOptions o = smallJob(4, 2, 2);  // one tensor-parallel group per host: stage 0 on hosts 0-1, stage 1 on 2-3
  // Hosts 0-2: pipeline transfers of replica 0. Hosts 0-1: stage 0's data-parallel rings.
  for (const char* hosts : {"0-2", "0-1"}) {
    CAPTURE(hosts);
    auto base = make(o);
    auto sim = make(o, {std::string("link_degradation:at=0,severity=3,hosts=") + hosts});
    auto before = run(*base, 3), after = run(*sim, 3);
    const ClusterLayout& l = sim->layout();
    const uint32_t a = hosts[0] - '0', b = hosts[2] - '0';
    auto transferGbps = [](const model::CollectiveStat& c) { return static_cast<double>(c.bytes) / static_cast<double>(c.total_ns - std::max<int64_t>(c.wait_ns, 0)); };
    for (uint32_t r = 0; r < l.ranks(); ++r) {
      CAPTURE(r);
      CHECK(phase(after[1][r], PhaseColumn::kCompute) == phase(before[1][r], PhaseColumn::kCompute));
      const bool on_link = l.hostOf(r) == a || l.hostOf(r) == b;
      for (const model::CollectiveStat& c : after[1][r].collectives) {
        if (c.op == model::CollectiveOp::kAllReduce && c.count > 1) continue;  // tensor-parallel: inside the host
        const auto* was = find(before[1][r], c.op, c.peer_rank);
        REQUIRE(was != nullptr);
        // Only the link's ends see their own transfers slow; the rest of a slow ring waits.
        const bool crosses = on_link && (c.peer_rank == model::CollectiveStat::kNoPeer ? b == a + 1 : l.hostOf(c.peer_rank) == (l.hostOf(r) == a ? b : a));
        if (crosses) {
          CHECK(transferGbps(c) < 0.5 * transferGbps(*was));
        } else {
          CHECK(transferGbps(c) == doctest::Approx(transferGbps(*was)).epsilon(0.01));
        }
      }
    }
  }
}

TEST_CASE("pipeline stage slowdown: the stage computes longer, the other stages idle longer") {
  auto base = make(smallJob());
  auto sim = make(smallJob(), {"pipeline_bubble:stage=1,at=0,severity=0.4"});
  auto before = run(*base, 3), after = run(*sim, 3);
  const ClusterLayout& l = sim->layout();
  for (uint32_t r = 0; r < l.ranks(); ++r) {
    CAPTURE(r);
    if (l.ppRank(r) == 1) {
      CHECK(phase(after[2][r], PhaseColumn::kCompute) > 1.3 * phase(before[2][r], PhaseColumn::kCompute));
    } else {
      CHECK(phase(after[2][r], PhaseColumn::kCompute) == phase(before[2][r], PhaseColumn::kCompute));
      CHECK(phase(after[2][r], PhaseColumn::kBubble) > phase(before[2][r], PhaseColumn::kBubble) + phase(before[2][r], PhaseColumn::kForward) / 10);
    }
  }
}

TEST_CASE("JIT stall: new signatures at the onset, compiler stacks and GPU idle while it lasts") {
  auto base = make(smallJob());
  auto sim = make(smallJob(), {"jit_stall:rank=6,at=2,for=2,severity=1"});
  auto before = run(*base, 6), after = run(*sim, 6);
  auto newSignatures = [](const StepRecord& r) {
    return std::count_if(r.events.begin(), r.events.end(), [](const auto& e) { return e.kind == model::EventKind::kNewKernelSignature; });
  };
  auto compilerSamples = [&](const StepRecord& r) {
    uint32_t n = 0;
    for (const auto& s : r.stacks) {
      for (const auto& e : sim->stacks()) n += e.stack_id == s.stack_id && e.frames[0].find("triton/compiler") == 0 ? s.samples : 0;
    }
    return n;
  };
  CHECK(newSignatures(after[2][6]) == 4);
  CHECK(newSignatures(after[3][6]) == 0);
  CHECK(compilerSamples(after[2][6]) > 0);
  CHECK(compilerSamples(after[4][6]) == 0);
  CHECK(compilerSamples(before[2][6]) == 0);
  CHECK(phase(after[2][6], PhaseColumn::kGpuIdle) > phase(before[2][6], PhaseColumn::kGpuIdle) + phase(before[2][6], PhaseColumn::kCompute) / 2);
  CHECK(after[5][6].kernels.size() == before[5][6].kernels.size() + 4);  // the new kernels stay
  CHECK(after[2][0].iter_ns > before[2][0].iter_ns);                     // everyone waits for it
}

TEST_CASE("warm-up steps run slower; a checkpoint stalls every rank and leaves a marker") {
  ClusterOptions o = smallJob();
  o.warmup_steps = 8;
  o.checkpoint_every = 5;
  auto sim = make(o);
  auto steps = run(*sim, 11);
  CHECK(steps[0][0].iter_ns > 1.5 * steps[9][0].iter_ns);
  CHECK(steps[5][0].iter_ns > steps[9][0].iter_ns + o.checkpoint_ns - steps[9][0].iter_ns / 10);
  CHECK(steps[5][3].events.size() == 1);
  CHECK(steps[5][3].events[0].name_id != 0);
  CHECK(steps[6][3].events.empty());
}

TEST_CASE("the kernel mix keeps the kernels of most time and leaves communication out") {
  KernelMix mix = builtinKernelMix(8);
  CHECK(mix.kernels.size() == 8);
  CHECK(mix.coverage > 0);
  CHECK(mix.coverage <= 1);
  for (const MixKernel& k : mix.kernels) {
    CHECK(k.phase != model::Phase::kCommunication);
    CHECK(k.variants.size() == mix.variants);
  }
  std::vector<StepRecord> none(2);
  CHECK(kernelMixFromSteps(none, {}, 8, "empty").status().code() == Status::Code::kInvalidArgument);
}
