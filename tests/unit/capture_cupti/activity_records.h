// Activity buffers for the CUPTI source tests, written with the toolkit's own record
// structs (CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, ...), one after another as CUPTI
// lays them out, so that the real cuptiActivityGetNextRecord walks them.
#pragma once

#include <cupti_activity.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "capture/cupti/cupti_api.h"

namespace argus::capture::cupti::testing {

// The real libcupti, loaded once per test executable (this part is built only with the
// toolkit, which ships it). Its cuptiActivityGetNextRecord walks buffers without a driver.
inline const CuptiApi& realCupti() {
  static CuptiApi api;
  static Status status = loadCuptiApi({}, &api);
  (void)status;
  return api;
}

inline CUpti_ActivityKernel10 kernelRecord(uint64_t start, uint64_t end, uint32_t correlation, const char* name,
                                           uint32_t device = 0, uint32_t stream = 7) {
  CUpti_ActivityKernel10 k;
  std::memset(&k, 0, sizeof(k));
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start;
  k.end = end;
  k.completed = end;
  k.deviceId = device;
  k.contextId = 1;
  k.streamId = stream;
  k.gridX = 108, k.gridY = 2, k.gridZ = 1;
  k.blockX = 256, k.blockY = 1, k.blockZ = 1;
  k.registersPerThread = 64;
  k.correlationId = correlation;
  k.gridId = 42;
  k.name = name;
  return k;
}

inline CUpti_ActivityMemcpy6 memcpyRecord(uint64_t start, uint64_t end, uint64_t bytes, uint8_t copy_kind, uint32_t correlation) {
  CUpti_ActivityMemcpy6 m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = copy_kind;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = bytes;
  m.start = start;
  m.end = end;
  m.deviceId = 0;
  m.contextId = 1;
  m.streamId = 13;
  m.correlationId = correlation;
  m.runtimeCorrelationId = correlation;
  m.copyCount = 1;
  return m;
}

inline CUpti_ActivityMemset4 memsetRecord(uint64_t start, uint64_t end, uint64_t bytes, uint32_t correlation) {
  CUpti_ActivityMemset4 m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.value = 0;
  m.bytes = bytes;
  m.start = start;
  m.end = end;
  m.deviceId = 1;
  m.contextId = 1;
  m.streamId = 21;
  m.correlationId = correlation;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  return m;
}

inline CUpti_ActivityExternalCorrelation externalRecord(uint64_t external_id, uint32_t correlation,
                                                        CUpti_ExternalCorrelationKind kind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2) {
  CUpti_ActivityExternalCorrelation x;
  std::memset(&x, 0, sizeof(x));
  x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  x.externalKind = kind;
  x.externalId = external_id;
  x.correlationId = correlation;
  return x;
}

inline CUpti_ActivityAPI apiRecord(uint64_t start, uint64_t end, uint32_t correlation,
                                   CUpti_ActivityKind kind = CUPTI_ACTIVITY_KIND_RUNTIME) {
  CUpti_ActivityAPI a;
  std::memset(&a, 0, sizeof(a));
  a.kind = kind;
  a.cbid = 211;  // cudaLaunchKernel_v7000
  a.start = start;
  a.end = end;
  a.processId = 100;
  a.threadId = 101;
  a.correlationId = correlation;
  return a;
}

// Records appended back to back into 8-byte-aligned storage (CUPTI's own buffer layout).
struct RecordBuffer {
  std::vector<uint64_t> storage;  // uint64: 8-byte alignment
  size_t size = 0;

  template <typename Record>
  size_t add(const Record& r) {
    static_assert(sizeof(Record) % 8 == 0);
    size_t at = size;
    storage.resize((size + sizeof(Record) + 7) / 8);
    std::memcpy(bytes() + at, &r, sizeof(Record));
    size += sizeof(Record);
    return at;
  }
  uint8_t* bytes() { return reinterpret_cast<uint8_t*>(storage.data()); }
};

}  // namespace argus::capture::cupti::testing
