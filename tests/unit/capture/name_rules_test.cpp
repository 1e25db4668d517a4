#include "capture/name_rules.h"

#include <doctest/doctest.h>

#include "capture/name_table.h"

using namespace argus::capture;
using argus::model::CollectiveOp;
using argus::model::Phase;

TEST_CASE("name table: dense ids, 0 is empty, text survives growth") {
  NameTable t;
  CHECK(t.intern("") == 0);
  uint32_t a = t.intern("ampere_sgemm_128x64_nn");
  uint32_t b = t.intern("ProfilerStep#3");
  CHECK(a == 1);
  CHECK(b == 2);
  CHECK(t.intern("ampere_sgemm_128x64_nn") == a);
  std::string_view kept = t.text(a);
  for (int i = 0; i < 10000; ++i) t.intern("name " + std::to_string(i));
  CHECK(kept == "ampere_sgemm_128x64_nn");  // views stay valid
  CHECK(t.text(b) == "ProfilerStep#3");
  CHECK(t.text(999999) == "");
  CHECK(t.find("ProfilerStep#3") == b);
  CHECK(t.find("absent") == 0);
  CHECK(t.size() == 10003);
}

TEST_CASE("step markers: ProfilerStep#N numbered, argus:step counted or numbered") {
  NameRules r = NameRules::defaults();
  CHECK(r.stepMarker("ProfilerStep#12") == 12);
  CHECK(r.stepMarker("ProfilerStep#0") == 0);
  CHECK(r.stepMarker("argus:step") == -1);
  CHECK(r.stepMarker("argus:step#7") == 7);
  CHECK(r.stepMarker("argus:step7") == 7);
  CHECK_FALSE(r.stepMarker("argus:stepper").has_value());
  CHECK(r.stepMarker("ProfilerStep#") == -1);  // the bare prefix: counted
  CHECK_FALSE(r.stepMarker("ProfilerStep#x1").has_value());
  CHECK_FALSE(r.stepMarker("ProfilerStep#99999999999999999999999").has_value());  // overflow
  CHECK_FALSE(r.stepMarker("aten::mm").has_value());
}

TEST_CASE("range classes: PyTorch, NVTX and Megatron names") {
  NameRules r = NameRules::defaults();
  CHECK(r.classifyRange("autograd::engine::evaluate_function: MulBackward0") == RangeClass::kBackward);
  CHECK(r.classifyRange("MmBackward0") == RangeClass::kBackward);
  CHECK(r.classifyRange("Optimizer.step#AdamW.step") == RangeClass::kOptimizer);
  CHECK(r.classifyRange("Optimizer.zero_grad#AdamW.zero_grad") == RangeClass::kOptimizer);
  CHECK(r.classifyRange("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__") == RangeClass::kDataLoad);
  CHECK(r.classifyRange("forward") == RangeClass::kForward);
  CHECK(r.classifyRange("Forward") == RangeClass::kForward);
  CHECK(r.classifyRange("forward-compute") == RangeClass::kForward);
  CHECK(r.classifyRange("backward-compute") == RangeClass::kBackward);
  CHECK(r.classifyRange("optimizer") == RangeClass::kOptimizer);
  CHECK(r.classifyRange("microbatch 3") == RangeClass::kMicrobatch);
  CHECK(r.classifyRange("argus:microbatch#2") == RangeClass::kMicrobatch);
  CHECK(r.classifyRange("aten::mm") == RangeClass::kNone);
  CHECK(r.classifyRange("") == RangeClass::kNone);
}

TEST_CASE("kernel classes: NCCL ops, optimizer, backward, default forward") {
  NameRules r = NameRules::defaults();
  KernelClass k = r.classifyKernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  CHECK(k.communication);
  CHECK(k.phase == Phase::kCommunication);
  CHECK(k.op == CollectiveOp::kAllReduce);
  CHECK(r.classifyKernel("ncclKernel_ReduceScatter_RING_LL_Sum_bfloat16").op == CollectiveOp::kReduceScatter);
  CHECK(r.classifyKernel("ncclKernel_AllGather_RING_LL_Sum_int8_t").op == CollectiveOp::kAllGather);
  CHECK(r.classifyKernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)").op == CollectiveOp::kSendRecv);
  CHECK(r.classifyKernel("ncclKernel_Broadcast_RING_LL_Sum_int8_t").op == CollectiveOp::kBroadcast);
  CHECK(r.classifyKernel("ncclKernel_Reduce_RING_LL_Sum_float").op == CollectiveOp::kReduce);
  CHECK(r.classifyKernel("ncclDevKernel_Generic").op == CollectiveOp::kOther);
  CHECK(r.classifyKernel("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<...>").phase == Phase::kOptimizer);
  CHECK(r.classifyKernel("void fused_adam_kernel<float>").phase == Phase::kOptimizer);
  CHECK(r.classifyKernel("flash_bwd_kernel").phase == Phase::kBackward);
  CHECK(r.classifyKernel("void at::native::softmax_backward_kernel").phase == Phase::kBackward);
  CHECK(r.classifyKernel("ampere_sgemm_128x64_nn").phase == Phase::kForward);
  CHECK_FALSE(r.classifyKernel("ampere_sgemm_128x64_nn").communication);
}
