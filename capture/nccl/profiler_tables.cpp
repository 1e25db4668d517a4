// The ncclProfiler_v5 and ncclProfiler_v4 function tables, bound to Plugin::instance().
// The two versions differ in init's argument order and the descriptor's type width; both
// funnel into the same Plugin calls.
#include "capture/nccl/nccl_plugin.h"

namespace argus::capture::nccl {
namespace {

abi::Result initV5(void** context, uint64_t comm_id, int* mask, const char*, int, int nranks, int rank, abi::DebugLogger) {
  return Plugin::instance().init(context, mask, comm_id, nranks, rank, true);
}
abi::Result initV4(void** context, int* mask, const char*, uint64_t comm_hash, int, int nranks, int rank, abi::DebugLogger) {
  return Plugin::instance().init(context, mask, comm_hash, nranks, rank, false);
}
abi::Result startV5(void* context, void** handle, abi::EventDescrV5* d) {
  return Plugin::instance().start(context, handle, d);
}
abi::Result startV4(void* context, void** handle, abi::EventDescrV4* d) {
  return Plugin::instance().start(context, handle, d);
}
abi::Result stop(void* handle) {
  return Plugin::instance().stop(handle);
}
abi::Result recordState(void* handle, int state, abi::EventStateArgs* args) {
  return Plugin::instance().recordState(handle, state, args);
}
abi::Result finalize(void* context) {
  return Plugin::instance().finalize(context);
}

constexpr abi::ProfilerV5 kV5 = {"argus", initV5, startV5, stop, recordState, finalize};
constexpr abi::ProfilerV4 kV4 = {"argus", initV4, startV4, stop, recordState, finalize};

}  // namespace

const abi::ProfilerV5& profilerV5() {
  return kV5;
}
const abi::ProfilerV4& profilerV4() {
  return kV4;
}

}  // namespace argus::capture::nccl
