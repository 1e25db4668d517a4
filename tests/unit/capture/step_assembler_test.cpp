// StepAssembler on hand-built streams whose answers are worked out by hand, to the ns.
#include "capture/step_assembler.h"

#include <map>

#include <doctest/doctest.h>

#include "event_stream.h"

using namespace argus::capture;
using namespace argus::capture::testing;
using argus::model::CollectiveOp;
using argus::model::EventKind;
using argus::model::Phase;
using argus::model::PhaseColumn;
using argus::model::StepRecord;

namespace {

// These tests check kernel totals to the ns: exact totals unless a test says otherwise.
StepAssemblerOptions exactTotals() {
  StepAssemblerOptions o;
  o.exact_kernel_totals = true;
  return o;
}

std::vector<StepRecord> assemble(EventStream& s, Collected* out = nullptr, StepAssemblerOptions opt = exactTotals()) {
  return testing::assemble(s, out, std::move(opt));
}

// One ProfilerStep#5 [1000, 11000) with forward and backward ranges; compute on stream 7
// overlapping NCCL on stream 8. Every kernel launched 500 ns before it starts, on thread 1.
//   gemm  [2000,4000) fwd   gemm [4000,6000) fwd   bwd_gemm [8000,9000) bwd
//   nccl  [3000,7000)       nccl [9500,10500)
EventStream overlapStream() {
  EventStream s;
  s.range("ProfilerStep#5", 1000, 11000);
  s.range("forward", 1000, 5000);
  s.range("backward", 5000, 9000);
  const char* nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
  s.kernel("gemm", 2000, 4000, 7, 1500, 1);
  s.kernel(nccl, 3000, 7000, 8, 2500, 1);
  s.kernel("gemm", 4000, 6000, 7, 3500, 1);
  s.kernel("bwd_gemm", 8000, 9000, 7, 7500, 1);
  s.kernel(nccl, 9500, 10500, 8, 9000, 1);
  return s;
}

}  // namespace

TEST_CASE("overlapping compute and NCCL on two streams: every column to the ns") {
  EventStream s = overlapStream();
  Collected c;
  auto recs = assemble(s, &c);
  REQUIRE(recs.size() == 1);
  const StepRecord& r = recs[0];
  CHECK(r.step == 5);
  CHECK(r.start_ns == 1000);
  CHECK(r.end_ns == 11000);
  CHECK(r.iter_ns == 10000);
  CHECK(r.flags == 0);
  CHECK(r.phase(PhaseColumn::kForward) == 4000);      // [2000,6000)
  CHECK(r.phase(PhaseColumn::kBackward) == 1000);     // [8000,9000)
  CHECK(r.phase(PhaseColumn::kOptimizer) == 0);
  CHECK(r.phase(PhaseColumn::kCompute) == 5000);      // [2000,6000) + [8000,9000)
  CHECK(r.phase(PhaseColumn::kCommTotal) == 5000);    // 4000 + 1000
  CHECK(r.phase(PhaseColumn::kCommExposed) == 2000);  // [6000,7000) + [9500,10500)
  CHECK(r.phase(PhaseColumn::kGpuIdle) == 3000);      // busy [2000,7000) [8000,9000) [9500,10500)
  // Idle gaps [1000,2000) ended by a kernel launched at 1500 (500 host-bound), [7000,8000)
  // by one launched at 7500 (500), [9000,9500) by one launched at 9000 (0), [10500,11000) by none.
  CHECK(r.phase(PhaseColumn::kLaunchGap) == 1000);
  CHECK(r.phase(PhaseColumn::kDataWait) == 0);
  CHECK(r.phase(PhaseColumn::kBubble) == 0);

  REQUIRE(r.kernels.size() == 3);
  const auto* gemm = findKernel(r, s.sig("gemm"));
  REQUIRE(gemm != nullptr);
  CHECK(gemm->phase == Phase::kForward);
  CHECK(gemm->count == 2);
  CHECK(gemm->total_ns == 4000);
  CHECK(gemm->hist.count() == 2);
  const auto* bwd = findKernel(r, s.sig("bwd_gemm"));
  REQUIRE(bwd != nullptr);
  CHECK(bwd->phase == Phase::kBackward);
  const auto* nccl = findKernel(r, s.sig("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  REQUIRE(nccl != nullptr);
  CHECK(nccl->phase == Phase::kCommunication);
  CHECK(nccl->count == 2);
  CHECK(nccl->total_ns == 5000);

  // Collective stats from the NCCL kernels (no collective events in this stream).
  REQUIRE(r.collectives.size() == 1);
  CHECK(r.collectives[0].op == CollectiveOp::kAllReduce);
  CHECK(r.collectives[0].count == 2);
  CHECK(r.collectives[0].total_ns == 5000);
  CHECK(r.collectives[0].wait_ns == -1);

  // Three new signatures: dictionary entries, once; no events (the session's first step).
  CHECK(c.kernels.size() == 3);
  int new_sig_events = 0;
  for (const auto& ev : r.events) new_sig_events += ev.kind == EventKind::kNewKernelSignature;
  CHECK(new_sig_events == 0);
  for (const auto& k : c.kernels) {
    if (k.signature == s.sig("gemm")) {
      CHECK(k.name == "gemm");
      CHECK(k.geometry.block_x == 128);
    }
  }
}

TEST_CASE("phase from kernel names when no range encloses the launch") {
  EventStream s;
  s.range("ProfilerStep#1", 0, 10000);
  s.kernel("ampere_sgemm_128x64_nn", 100, 200);                       // no launch known
  s.kernel("flash_bwd_kernel", 300, 400);
  s.kernel("void multi_tensor_apply_kernel<AdamFunctor>", 500, 700);
  s.kernel("ncclKernel_ReduceScatter_RING_LL_Sum_bfloat16", 800, 900);
  s.kernel("softmax_backward", 1000, 1100, 7, 950, 1);                // launched, but no ranges
  auto recs = assemble(s);
  REQUIRE(recs.size() == 1);
  const StepRecord& r = recs[0];
  CHECK(findKernel(r, s.sig("ampere_sgemm_128x64_nn"))->phase == Phase::kForward);
  CHECK(findKernel(r, s.sig("flash_bwd_kernel"))->phase == Phase::kBackward);
  CHECK(findKernel(r, s.sig("void multi_tensor_apply_kernel<AdamFunctor>"))->phase == Phase::kOptimizer);
  CHECK(findKernel(r, s.sig("ncclKernel_ReduceScatter_RING_LL_Sum_bfloat16"))->phase == Phase::kCommunication);
  CHECK(findKernel(r, s.sig("softmax_backward"))->phase == Phase::kBackward);
  CHECK(r.phase(PhaseColumn::kForward) == 100);
  CHECK(r.phase(PhaseColumn::kBackward) == 200);
  CHECK(r.phase(PhaseColumn::kOptimizer) == 200);
  CHECK(r.collectives.at(0).op == CollectiveOp::kReduceScatter);
}

TEST_CASE("ranges beat names; the innermost range wins; PyTorch names") {
  EventStream s;
  s.range("ProfilerStep#2", 0, 100000);
  s.range("Optimizer.step#AdamW.step", 50000, 60000);
  s.range("forward", 1000, 20000);
  s.range("autograd::engine::evaluate_function: MmBackward0", 20000, 30000);
  s.range("backward", 30000, 40000, 2);  // on another thread
  // A "backward"-named kernel launched inside forward is forward; an optimizer-named one
  // launched inside the backward node is backward.
  s.kernel("flash_bwd_kernel", 2000, 3000, 7, 1500, 1);
  s.kernel("fused_adam", 21000, 22000, 7, 20500, 1);
  s.kernel("gemm", 51000, 52000, 7, 50500, 1);
  // Launched on thread 2 inside its "backward" range.
  s.kernel("gemm2", 31000, 32000, 7, 30500, 2);
  // Launched on thread 3 (no ranges): falls back to the step's thread (1), where nothing
  // encloses 35000, so its name decides (forward).
  s.kernel("gemm3", 36000, 37000, 7, 35000, 3);
  auto recs = assemble(s);
  REQUIRE(recs.size() == 1);
  const StepRecord& r = recs[0];
  CHECK(findKernel(r, s.sig("flash_bwd_kernel"))->phase == Phase::kForward);
  CHECK(findKernel(r, s.sig("fused_adam"))->phase == Phase::kBackward);
  CHECK(findKernel(r, s.sig("gemm"))->phase == Phase::kOptimizer);
  CHECK(findKernel(r, s.sig("gemm2"))->phase == Phase::kBackward);
  CHECK(findKernel(r, s.sig("gemm3"))->phase == Phase::kForward);
}

TEST_CASE("nested push/pop ranges: innermost phase; steps from ProfilerStep#N pushes; emission after the lag") {
  EventStream s;
  // Step 10 [0, 10000): forward { user range { backward-named nested range } }
  s.push("ProfilerStep#10", 0);
  s.push("forward", 100);
  s.push("aten::linear", 200);          // not a phase range: ignored
  s.push("MulBackward0", 300);          // backward inside forward (innermost wins)
  s.kernel("k_inner", 5000, 5100, 7, 350, 1);
  s.pop(400);
  s.kernel("k_outer", 5200, 5300, 7, 450, 1);
  s.pop(500);
  s.pop(600);
  // Launched at 9000 in step 10, runs in step 11's window.
  s.kernel("k_late", 10500, 12500, 7, 9000, 1);
  s.pop(10000);
  s.push("ProfilerStep#11", 10000);
  s.kernel("k11", 13000, 14000, 7, 10100, 1);
  s.pop(20000);
  StepAssemblerOptions opt;
  opt.emit_lag_ns = 1000;
  Collected c;
  StepAssembler a(s.names, opt, c.callback());
  for (const TraceEvent& e : s.events) a.onEvent(e);
  // Step 10 ended at 10000; the watermark reached 20000 > 10000 + lag: already out.
  REQUIRE(c.records.size() == 1);
  a.flush();
  REQUIRE(c.records.size() == 2);
  const StepRecord& r10 = c.records[0];
  const StepRecord& r11 = c.records[1];
  CHECK(r10.step == 10);
  CHECK(r11.step == 11);
  CHECK(findKernel(r10, s.sig("k_inner"))->phase == Phase::kBackward);
  CHECK(findKernel(r10, s.sig("k_outer"))->phase == Phase::kForward);
  REQUIRE(findKernel(r10, s.sig("k_late")) != nullptr);  // by launch, not by where it ran
  CHECK(findKernel(r11, s.sig("k_late")) == nullptr);
  CHECK(r10.phase(PhaseColumn::kCompute) == 2200);
  // Step 11's device window [10000, 20000) is busy with k_late's tail and k11.
  CHECK(r11.phase(PhaseColumn::kCompute) == 1000);
  CHECK(r11.phase(PhaseColumn::kGpuIdle) == 10000 - 2000 - 1000);
  // Step 10's window: k_inner, k_outer and k_late's head [10500,10000) -> none of k_late.
  CHECK(r10.phase(PhaseColumn::kGpuIdle) == 10000 - 200);
}

TEST_CASE("launch time through correlation ids") {
  EventStream s;
  s.range("ProfilerStep#1", 0, 1000);
  s.range("ProfilerStep#2", 1000, 2000);
  s.range("optimizer", 900, 1000, 4);
  s.launch(77, 950, 4);  // launched in step 1 inside "optimizer" on thread 4 ...
  s.kernel("gemm", 1200, 1300).correlation = 77;  // ... runs in step 2's window
  auto recs = assemble(s);
  REQUIRE(recs.size() == 2);
  REQUIRE(recs[0].kernels.size() == 1);
  CHECK(recs[0].kernels[0].phase == Phase::kOptimizer);
  CHECK(recs[1].kernels.empty());
  CHECK(recs[1].phase(PhaseColumn::kGpuIdle) == 900);
}

TEST_CASE("data wait, memcpy in a data-loading range, device idle with copies") {
  EventStream s;
  s.range("ProfilerStep#3", 1000, 5000);
  s.range("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 1000, 1500, 1);
  s.range("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 1200, 1800, 2);
  s.memcpy(CopyKind::kHtoD, 1600, 2000, 1 << 20).launch_ns = 1400;
  s.events.back().thread = 1;
  s.kernel("gemm", 2000, 3000, 7, 1900, 1);
  auto recs = assemble(s);
  REQUIRE(recs.size() == 1);
  const StepRecord& r = recs[0];
  CHECK(r.phase(PhaseColumn::kDataWait) == 800);   // [1000,1800) across two threads
  CHECK(r.phase(PhaseColumn::kCompute) == 1000);   // copies are not compute
  CHECK(r.phase(PhaseColumn::kGpuIdle) == 4000 - 1400);
  uint64_t copy = argus::model::kernelSignature("[memcpy HtoD]", {});
  const auto* k = findKernel(r, copy);
  REQUIRE(k != nullptr);
  CHECK(k->phase == Phase::kDataLoad);
  CHECK(k->total_ns == 400);
}

TEST_CASE("pipeline bubble: device idle between microbatch ranges") {
  EventStream s;
  s.range("ProfilerStep#1", 0, 10000);
  s.range("microbatch 0", 1000, 3000);
  s.range("microbatch 1", 4000, 6000);
  s.range("microbatch 2", 7000, 8000);
  s.kernel("k", 1000, 3500);
  s.kernel("k", 4000, 6000);
  s.kernel("k", 6500, 8000);
  auto recs = assemble(s);
  REQUIRE(recs.size() == 1);
  // Gaps [3000,4000) and [6000,7000), each half busy.
  CHECK(recs[0].phase(PhaseColumn::kBubble) == 1000);
  CHECK(recs[0].phase(PhaseColumn::kGpuIdle) == 10000 - 6000);
}

TEST_CASE("collective events give the collective stats; NCCL kernels are not counted twice") {
  EventStream s;
  s.range("ProfilerStep#1", 0, 10000);
  s.collective(CollectiveOp::kAllReduce, 0xabc, 1 << 20, 100, 600);
  s.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 150, 600, 8);
  s.collective(CollectiveOp::kAllReduce, 0xabc, (1 << 20) + 5, 1000, 1300);
  s.collective(CollectiveOp::kAllGather, 0xdef, 4096, 2000, 2100);
  s.collective(CollectiveOp::kSend, 0xdef, 64, 3000, 3010).peer = 3;
  auto recs = assemble(s);
  REQUIRE(recs.size() == 1);
  const StepRecord& r = recs[0];
  REQUIRE(r.collectives.size() == 3);
  CHECK(r.collectives[0].op == CollectiveOp::kAllReduce);
  CHECK(r.collectives[0].communicator == 0xabc);
  CHECK(r.collectives[0].size_class == 21);
  CHECK(r.collectives[0].count == 2);
  CHECK(r.collectives[0].bytes == (2u << 20) + 5);
  CHECK(r.collectives[0].total_ns == 800);
  CHECK(r.collectives[1].op == CollectiveOp::kAllGather);
  CHECK(r.collectives[2].op == CollectiveOp::kSend);
  CHECK(r.collectives[2].peer_rank == 3);
  CHECK(r.phase(PhaseColumn::kCommTotal) == 450);  // from the kernel, not the events
  CHECK(r.phase(PhaseColumn::kGpuIdle) == 10000 - 450);
}

TEST_CASE("an NCCL kernel no collective event covers still counts as a collective, after collective events were seen") {
  // Two steps. A collective event (device 0, stream 8) covers the first AllReduce kernel of
  // step 1; the second AllReduce kernel and the ReduceScatter kernel have none (a source that
  // reports some operations only), nor do those of step 2, the kernel on another stream next
  // to a collective, and the one on another device.
  EventStream s;
  s.range("ProfilerStep#1", 0, 10000);
  s.range("ProfilerStep#2", 10000, 20000);
  const char* all_reduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
  s.collective(CollectiveOp::kAllReduce, 0xabc, 1 << 20, 100, 600);
  s.kernel(all_reduce, 150, 600, 8);
  s.kernel(all_reduce, 600, 900, 8).bytes = 4096;  // starts where the collective ends: not covered
  s.kernel("ncclKernel_ReduceScatter_RING_LL_Sum_bfloat16", 2000, 2500, 8);
  s.collective(CollectiveOp::kAllGather, 0xdef, 4096, 3000, 3500, 8);
  s.kernel("ncclDevKernel_AllGather_RING_LL", 3100, 3400, 9);  // overlaps the collective, other stream
  s.kernel("ncclDevKernel_AllGather_RING_LL", 3100, 3400, 8).device = 1;  // other device
  s.kernel(all_reduce, 12000, 12500, 8);
  auto recs = assemble(s);
  REQUIRE(recs.size() == 2);

  auto find = [](const StepRecord& r, CollectiveOp op, uint64_t comm) -> const argus::model::CollectiveStat* {
    for (const auto& c : r.collectives) {
      if (c.op == op && c.communicator == comm) return &c;
    }
    return nullptr;
  };
  const StepRecord& r1 = recs[0];
  // From the events: the AllReduce (its kernel not counted again) and the AllGather.
  REQUIRE(find(r1, CollectiveOp::kAllReduce, 0xabc) != nullptr);
  CHECK(find(r1, CollectiveOp::kAllReduce, 0xabc)->count == 1);
  CHECK(find(r1, CollectiveOp::kAllReduce, 0xabc)->total_ns == 500);
  REQUIRE(find(r1, CollectiveOp::kAllGather, 0xdef) != nullptr);
  CHECK(find(r1, CollectiveOp::kAllGather, 0xdef)->count == 1);
  // From the uncovered kernels, keyed as without collective events: communicator 0, bytes
  // from the kernel event.
  const auto* ar = find(r1, CollectiveOp::kAllReduce, 0);
  REQUIRE(ar != nullptr);
  CHECK(ar->count == 1);
  CHECK(ar->bytes == 4096);
  CHECK(ar->total_ns == 300);
  const auto* rs = find(r1, CollectiveOp::kReduceScatter, 0);
  REQUIRE(rs != nullptr);
  CHECK(rs->count == 1);
  CHECK(rs->total_ns == 500);
  const auto* ag = find(r1, CollectiveOp::kAllGather, 0);
  REQUIRE(ag != nullptr);
  CHECK(ag->count == 2);
  CHECK(ag->total_ns == 600);
  CHECK(r1.collectives.size() == 5);

  const StepRecord& r2 = recs[1];
  REQUIRE(r2.collectives.size() == 1);
  CHECK(r2.collectives[0].op == CollectiveOp::kAllReduce);
  CHECK(r2.collectives[0].communicator == 0);
  CHECK(r2.collectives[0].count == 1);
  CHECK(r2.collectives[0].total_ns == 500);
}

TEST_CASE("stack samples, marks and their dictionary, new signatures once per session") {
  EventStream s;
  for (int step = 0; step < 3; ++step) {
    int64_t b = step * 1000;
    s.range("argus:step", b, b + 1000);
    s.kernel("gemm", b + 100, b + 200);
    if (step == 1) s.kernel("jit_fused", b + 210, b + 220);  // appears after the first step
    s.sample(42, b + 300);
    s.sample(42, b + 400);
    s.sample(7, b + 500);
    s.mark("checkpoint", b + 600);
  }
  Collected c;
  auto recs = assemble(s, &c);
  REQUIRE(recs.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(recs[i].step == i);  // counted from 0
    REQUIRE(recs[i].stacks.size() == 2);
    CHECK(recs[i].stacks[0].stack_id == 7);
    CHECK(recs[i].stacks[0].samples == 1);
    CHECK(recs[i].stacks[1].samples == 2);
    int markers = 0, new_sigs = 0;
    for (const auto& ev : recs[i].events) {
      markers += ev.kind == EventKind::kMarker && ev.name_id == s.names.find("checkpoint");
      new_sigs += ev.kind == EventKind::kNewKernelSignature;
    }
    CHECK(markers == 1);
    CHECK(new_sigs == (i == 1 ? 1 : 0));  // gemm started the session; jit_fused is new in step 1
  }
  REQUIRE(c.strings.size() == 1);
  CHECK(c.strings[0].text == "checkpoint");
  CHECK(c.kernels.size() == 2);  // gemm, jit_fused
}

TEST_CASE("argus:step marks delimit steps; a step without kernels is all idle") {
  EventStream s;
  s.mark("argus:step", 1000);
  s.kernel("gemm", 1100, 1200);
  s.mark("argus:step", 2000);  // an empty step
  s.mark("argus:step#40", 3000);
  s.kernel("gemm", 3100, 3200);
  s.mark("argus:step", 4000);
  auto recs = assemble(s);
  // The last mark opens a step no marker ends: flushed as partial at the watermark (its begin).
  REQUIRE(recs.size() == 4);
  CHECK(recs[0].step == 0);
  CHECK(recs[1].step == 1);
  CHECK(recs[1].kernels.empty());
  CHECK(recs[1].phase(PhaseColumn::kGpuIdle) == 1000);
  CHECK(recs[1].phase(PhaseColumn::kCompute) == 0);
  CHECK(recs[2].step == 40);
  CHECK(recs[3].step == 41);
  CHECK((recs[3].flags & argus::model::kStepPartial) != 0);
  CHECK(recs[3].iter_ns == 0);
}

TEST_CASE("kernel totals: the histogram's sketch total by default (within 1%), exact on request") {
  EventStream s;
  s.push("ProfilerStep#1", 0);
  for (int i = 0; i < 50; ++i) s.kernel("gemm", 1000 + i * 10'000, 1000 + i * 10'000 + 3'001 + i * 37, 7, 900 + i * 10'000, 1);
  s.pop(600'000);
  s.push("ProfilerStep#2", 600'000);
  s.pop(700'000);
  int64_t exact = 0;
  for (int i = 0; i < 50; ++i) exact += 3'001 + i * 37;

  auto sketched = assemble(s, nullptr, StepAssemblerOptions{});
  REQUIRE(!sketched.empty());
  const auto* k = findKernel(sketched[0], s.sig("gemm"));
  REQUIRE(k != nullptr);
  CHECK(k->total_ns == k->hist.sketchTotal());
  CHECK(k->total_ns != exact);
  CHECK(std::abs(static_cast<double>(k->total_ns - exact)) <= 0.01 * static_cast<double>(exact));
  CHECK(sketched[0].phase(argus::model::PhaseColumn::kCompute) == exact);  // phase totals stay exact

  auto exacts = assemble(s);
  const auto* e = findKernel(exacts[0], s.sig("gemm"));
  REQUIRE(e != nullptr);
  CHECK(e->total_ns == exact);
  CHECK(e->hist == k->hist);
}

TEST_CASE("kernel statistics come out in the record's order (signature, phase) with their own histograms") {
  EventStream s;
  s.range("ProfilerStep#3", 0, 1'000'000);
  s.range("forward", 0, 500'000);
  s.range("backward", 500'000, 1'000'000);
  // 40 names, each launched in both phases, in an order unrelated to their signatures.
  for (int half = 0; half < 2; ++half) {
    for (int i = 0; i < 40; ++i) {
      int64_t t = half * 500'000 + 1000 + ((i * 17) % 40) * 10'000;
      for (int rep = 0; rep <= i % 3; ++rep) {
        s.kernel("kernel_" + std::to_string(i), t + rep * 3000, t + rep * 3000 + 1000 + i, 7, t + rep * 3000 - 100, 1);
      }
    }
  }
  auto recs = assemble(s);
  REQUIRE(recs.size() == 1);
  const StepRecord& r = recs[0];
  REQUIRE(r.kernels.size() == 80);
  StepRecord sorted = r;
  sorted.canonicalize();
  CHECK(sorted.kernels == r.kernels);
  for (int i = 0; i < 40; ++i) {
    for (Phase p : {Phase::kForward, Phase::kBackward}) {
      const auto* k = findKernel(r, s.sig("kernel_" + std::to_string(i)), p);
      REQUIRE(k != nullptr);
      CHECK(k->count == static_cast<uint32_t>(i % 3 + 1));
      CHECK(k->hist.count() == k->count);
      CHECK(k->total_ns == int64_t{k->count} * (1000 + i));
    }
  }
}

TEST_CASE("kernel histograms equal DurationHistogram::add of every duration, while the kernel set changes from step to step") {
  // 30 steps of 1 ms. Kernel k runs in step n when (n + k) % (k % 7 + 1) == 0: some every
  // step, some every few (absent for more steps than the assembler keeps a statistic
  // listed), with durations spread from a few ns to over 100x their smallest (buckets far
  // apart) and repeated ones. Forward in the first half of a step, backward in the second.
  EventStream s;
  std::map<std::pair<int, std::pair<uint64_t, Phase>>, argus::model::DurationHistogram> want;
  std::map<std::pair<int, std::pair<uint64_t, Phase>>, int64_t> want_total;
  uint64_t lcg = 12345;
  auto next = [&] { return (lcg = lcg * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  for (int n = 0; n < 30; ++n) {
    const int64_t t0 = int64_t{n} * 1'000'000;
    s.range("ProfilerStep#" + std::to_string(n), t0, t0 + 1'000'000);
    s.range("forward", t0, t0 + 500'000);
    s.range("backward", t0 + 500'000, t0 + 1'000'000);
    int64_t t = t0 + 100;
    for (int rep = 0; rep < 60; ++rep) {
      const int k = static_cast<int>(next() % 25);
      if ((n + k) % (k % 7 + 1) != 0) continue;
      const int64_t dur = k % 5 == 0 ? 1 + static_cast<int64_t>(next() % 6000) : 200 + k * 13 + static_cast<int64_t>(next() % 3) * (k % 4 == 0 ? 400 : 1);
      const std::string name = "k" + std::to_string(k);
      s.kernel(name, t, t + dur, 7, t - 50, 1);
      const Phase phase = t - 50 < t0 + 500'000 ? Phase::kForward : Phase::kBackward;
      want[{n, {s.sig(name), phase}}].add(dur);
      want_total[{n, {s.sig(name), phase}}] += dur;
      t += 16'000;
    }
  }
  for (bool exact : {true, false}) {
    StepAssemblerOptions options;
    options.exact_kernel_totals = exact;
    auto recs = assemble(s, nullptr, options);
    REQUIRE(recs.size() == 30);
    size_t seen = 0;
    for (const StepRecord& r : recs) {
      StepRecord sorted = r;
      sorted.canonicalize();
      CHECK(sorted.kernels == r.kernels);
      for (const auto& k : r.kernels) {
        auto it = want.find({static_cast<int>(r.step), {k.signature, k.phase}});
        REQUIRE(it != want.end());
        CHECK(k.hist == it->second);
        CHECK(k.count == it->second.count());
        CHECK(k.total_ns == (exact ? want_total[it->first] : it->second.sketchTotal()));
        ++seen;
      }
    }
    CHECK(seen == want.size());
  }
}
