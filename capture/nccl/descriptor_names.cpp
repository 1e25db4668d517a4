#include "capture/nccl/descriptor_names.h"

#include <atomic>
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

// Answers by string address: NCCL passes the same static string for the same name, so the
// string compares run once per distinct pointer. One 64-bit word per entry (the address in
// the low 48 bits, the answer in the high 16) keeps a racing reader from pairing one
// thread's address with another's answer; a collision only costs a recompute.
class AddressCache {
 public:
  template <typename Fn>
  uint16_t get(const char* s, Fn compute) {
    auto addr = reinterpret_cast<uint64_t>(s);
    if ((addr >> 48) != 0) return compute(s);  // not a user-space address of this ABI: no caching
    std::atomic<uint64_t>& e = entries_[(addr >> 3) % kEntries];
    uint64_t v = e.load(std::memory_order_relaxed);
    if ((v & kAddrMask) == addr && addr != 0) return static_cast<uint16_t>(v >> 48);
    uint16_t answer = compute(s);
    e.store(addr | uint64_t{answer} << 48, std::memory_order_relaxed);
    return answer;
  }

 private:
  static constexpr size_t kEntries = 32;
  static constexpr uint64_t kAddrMask = (uint64_t{1} << 48) - 1;
  std::atomic<uint64_t> entries_[kEntries] = {};
};

AddressCache g_funcs, g_types, g_algos, g_protos;

uint16_t computeOp(const char* func) {
  for (const OpName& o : kOps) {
    if (same(func, o.name)) return static_cast<uint16_t>(o.op);
  }
  return static_cast<uint16_t>(CollectiveOp::kOther);
}

uint16_t computeBytes(const char* datatype) {
  for (const TypeSize& t : kTypes) {
    if (same(datatype, t.name)) return static_cast<uint16_t>(t.bytes);
  }
  return 0;
}

uint16_t computeAlgo(const char* algo) {
  for (uint8_t i = 1; i < kAlgoCount; ++i) {
    if (same(algo, kAlgos[i])) return i;
  }
  return 0;
}

uint16_t computeProto(const char* proto) {
  for (uint8_t i = 1; i < kProtoCount; ++i) {
    if (same(proto, kProtos[i])) return i;
  }
  return 0;
}

}  // namespace

CollectiveOp opOfFunc(const char* func) {
  if (func == nullptr) return CollectiveOp::kOther;
  return static_cast<CollectiveOp>(g_funcs.get(func, computeOp));
}

uint32_t bytesOfDatatype(const char* datatype) {
  if (datatype == nullptr) return 0;
  return g_types.get(datatype, computeBytes);
}

uint8_t algoIndex(const char* algo) {
  if (algo == nullptr) return 0;
  return static_cast<uint8_t>(g_algos.get(algo, computeAlgo));
}

uint8_t protoIndex(const char* proto) {
  if (proto == nullptr) return 0;
  return static_cast<uint8_t>(g_protos.get(proto, computeProto));
}

const char* algoName(uint8_t index) {
  return index < kAlgoCount ? kAlgos[index] : "";
}

const char* protoName(uint8_t index) {
  return index < kProtoCount ? kProtos[index] : "";
}

}  // namespace argus::capture::nccl
