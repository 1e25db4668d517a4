// DescriptorNames: what the strings of an NCCL profiler descriptor mean (func, datatype,
// algo, proto), decided on NCCL's calling thread without allocation or locks. NCCL passes
// pointers to its own static strings (ncclFuncToString, ncclDatatypeToString, the algorithm
// and protocol tables); Argus compares them with the names NCCL 2.27/2.28 uses and keeps
// small indices, never the pointers, so nothing dangles if NCCL is unloaded before a drain.
// A null or unknown string maps to "other" (op kOther, 0 bytes per element, algo/proto 0).
// Answers are cached by the string's address (NCCL's names are static strings):
// REQUIRES: an address keeps its text for the life of the process (thread-safe otherwise).
#pragma once

#include <cstdint>

#include "model/step_record.h"

namespace argus::capture::nccl {

// The collective operation of a func name ("AllReduce", "Send" ...); kOther when unknown.
model::CollectiveOp opOfFunc(const char* func);
// Bytes per element of an NCCL datatype name ("ncclFloat32" -> 4); 0 when unknown.
uint32_t bytesOfDatatype(const char* datatype);

// Algorithm and protocol indices: 0 = other / not given, then NCCL's names in order.
uint8_t algoIndex(const char* algo);
uint8_t protoIndex(const char* proto);
const char* algoName(uint8_t index);   // "" for 0 or out of range
const char* protoName(uint8_t index);  // "" for 0 or out of range
inline constexpr uint8_t kAlgoCount = 8;   // indices [0, kAlgoCount)
inline constexpr uint8_t kProtoCount = 4;

}  // namespace argus::capture::nccl
