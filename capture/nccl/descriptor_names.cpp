#include "capture/nccl/descriptor_names.h"

#include <cstring>

namespace argus::capture::nccl {
namespace {

using model::CollectiveOp;

struct OpName {
  const char* name;
  CollectiveOp op;
};
// ncclFuncToString's names (NCCL 2.28), and the AllToAll spellings of its newer API.
constexpr OpName kOps[] = {
    {"AllReduce", CollectiveOp::kAllReduce}, {"AllGather", CollectiveOp::kAllGather}, {"ReduceScatter", CollectiveOp::kReduceScatter},
    {"Broadcast", CollectiveOp::kBroadcast}, {"Reduce", CollectiveOp::kReduce},       {"Send", CollectiveOp::kSend},
    {"Recv", CollectiveOp::kRecv},           {"SendRecv", CollectiveOp::kSendRecv},   {"AlltoAll", CollectiveOp::kAllToAll},
    {"AllToAll", CollectiveOp::kAllToAll},
};

struct TypeSize {
  const char* name;
  uint32_t bytes;
};
constexpr TypeSize kTypes[] = {
    {"ncclInt8", 1},    {"ncclUint8", 1},    {"ncclInt32", 4},    {"ncclUint32", 4},     {"ncclInt64", 8},
    {"ncclUint64", 8},  {"ncclFloat16", 2},  {"ncclFloat32", 4},  {"ncclFloat64", 8},    {"ncclBfloat16", 2},
    {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1}, {"ncclFloat", 4}, {"ncclHalf", 2}, {"ncclDouble", 8}, {"ncclChar", 1}, {"ncclInt", 4},
};

constexpr const char* kAlgos[kAlgoCount] = {"", "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
constexpr const char* kProtos[kProtoCount] = {"", "LL", "LL128", "Simple"};

bool same(const char* a, const char* b) {
  return std::strcmp(a, b) == 0;
}

}  // namespace

CollectiveOp opOfFunc(const char* func) {
  if (func == nullptr) return CollectiveOp::kOther;
  for (const OpName& o : kOps) {
    if (same(func, o.name)) return o.op;
  }
  return CollectiveOp::kOther;
}

uint32_t bytesOfDatatype(const char* datatype) {
  if (datatype == nullptr) return 0;
  for (const TypeSize& t : kTypes) {
    if (same(datatype, t.name)) return t.bytes;
  }
  return 0;
}

uint8_t algoIndex(const char* algo) {
  if (algo == nullptr) return 0;
  for (uint8_t i = 1; i < kAlgoCount; ++i) {
    if (same(algo, kAlgos[i])) return i;
  }
  return 0;
}

uint8_t protoIndex(const char* proto) {
  if (proto == nullptr) return 0;
  for (uint8_t i = 1; i < kProtoCount; ++i) {
    if (same(proto, kProtos[i])) return i;
  }
  return 0;
}

const char* algoName(uint8_t index) {
  return index < kAlgoCount ? kAlgos[index] : "";
}

const char* protoName(uint8_t index) {
  return index < kProtoCount ? kProtos[index] : "";
}

}  // namespace argus::capture::nccl
