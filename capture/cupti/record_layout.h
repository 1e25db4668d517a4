// Where the fields the decoder reads sit in CUPTI activity records, taken from the
// toolkit's headers (offsetof on the real structs), and the facts that let one decoder
// read records from libcupti 12.x and 13.x alike (DESIGN.md §9).
//
// CUPTI writes the record version of the library that runs, not of the headers we built
// against: CUDA 13 writes CUpti_ActivityKernel10 (216 bytes), CUDA 12.x Kernel9 (208);
// memcpy records are Memcpy6 (96) and Memcpy5 (88). The fields we read form a common
// prefix: the same offsets in both versions (checked below), so the decoder needs only
// that prefix (k*Needs bytes) and never the record's full size.
//
// Fields are read with memcpy from the record bytes (see load()): no alignment or aliasing
// assumption about the buffer, which tests fill by hand.
#pragma once

#include <cupti_activity.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace argus::capture::cupti::layout {

template <typename T>
inline T load(const uint8_t* record, size_t offset) {
  T v;
  std::memcpy(&v, record + offset, sizeof(T));
  return v;
}

// Every record starts with its CUpti_ActivityKind (a 32-bit enum).
inline constexpr size_t kKindOffset = offsetof(CUpti_Activity, kind);
static_assert(sizeof(CUpti_ActivityKind) == 4);

// Kernels: CONCURRENT_KERNEL and KERNEL share the struct.
using Kernel = CUpti_ActivityKernel10;
namespace kernel {
inline constexpr size_t kStart = offsetof(Kernel, start);
inline constexpr size_t kEnd = offsetof(Kernel, end);
inline constexpr size_t kDevice = offsetof(Kernel, deviceId);
inline constexpr size_t kStream = offsetof(Kernel, streamId);
inline constexpr size_t kGridX = offsetof(Kernel, gridX);
inline constexpr size_t kGridY = offsetof(Kernel, gridY);
inline constexpr size_t kGridZ = offsetof(Kernel, gridZ);
inline constexpr size_t kBlockX = offsetof(Kernel, blockX);
inline constexpr size_t kBlockY = offsetof(Kernel, blockY);
inline constexpr size_t kBlockZ = offsetof(Kernel, blockZ);
inline constexpr size_t kCorrelation = offsetof(Kernel, correlationId);
inline constexpr size_t kName = offsetof(Kernel, name);
inline constexpr size_t kNeeds = kName + sizeof(const char*);
}  // namespace kernel
static_assert(sizeof(CUpti_ActivityKernel10) == 216 && sizeof(CUpti_ActivityKernel9) == 208, "DESIGN.md §9");
static_assert(offsetof(CUpti_ActivityKernel9, start) == kernel::kStart && offsetof(CUpti_ActivityKernel9, end) == kernel::kEnd &&
              offsetof(CUpti_ActivityKernel9, deviceId) == kernel::kDevice &&
              offsetof(CUpti_ActivityKernel9, streamId) == kernel::kStream &&
              offsetof(CUpti_ActivityKernel9, gridX) == kernel::kGridX &&
              offsetof(CUpti_ActivityKernel9, blockZ) == kernel::kBlockZ &&
              offsetof(CUpti_ActivityKernel9, correlationId) == kernel::kCorrelation &&
              offsetof(CUpti_ActivityKernel9, name) == kernel::kName,
              "the 12.x kernel record reads with the 13.x offsets");
static_assert(kernel::kGridY == kernel::kGridX + 4 && kernel::kGridZ == kernel::kGridX + 8 && kernel::kBlockX == kernel::kGridX + 12 &&
              kernel::kBlockY == kernel::kGridX + 16 && kernel::kBlockZ == kernel::kGridX + 20,
              "grid and block are six consecutive int32 (one 24-byte load)");

using Memcpy = CUpti_ActivityMemcpy6;
namespace memcpy_rec {
inline constexpr size_t kCopyKind = offsetof(Memcpy, copyKind);
inline constexpr size_t kBytes = offsetof(Memcpy, bytes);
inline constexpr size_t kStart = offsetof(Memcpy, start);
inline constexpr size_t kEnd = offsetof(Memcpy, end);
inline constexpr size_t kDevice = offsetof(Memcpy, deviceId);
inline constexpr size_t kStream = offsetof(Memcpy, streamId);
inline constexpr size_t kCorrelation = offsetof(Memcpy, correlationId);
inline constexpr size_t kNeeds = kCorrelation + sizeof(uint32_t);
}  // namespace memcpy_rec
static_assert(offsetof(CUpti_ActivityMemcpy5, copyKind) == memcpy_rec::kCopyKind &&
              offsetof(CUpti_ActivityMemcpy5, bytes) == memcpy_rec::kBytes &&
              offsetof(CUpti_ActivityMemcpy5, start) == memcpy_rec::kStart && offsetof(CUpti_ActivityMemcpy5, end) == memcpy_rec::kEnd &&
              offsetof(CUpti_ActivityMemcpy5, deviceId) == memcpy_rec::kDevice &&
              offsetof(CUpti_ActivityMemcpy5, streamId) == memcpy_rec::kStream &&
              offsetof(CUpti_ActivityMemcpy5, correlationId) == memcpy_rec::kCorrelation,
              "the 12.x memcpy record reads with the 13.x offsets");

using Memset = CUpti_ActivityMemset4;
namespace memset_rec {
inline constexpr size_t kBytes = offsetof(Memset, bytes);
inline constexpr size_t kStart = offsetof(Memset, start);
inline constexpr size_t kEnd = offsetof(Memset, end);
inline constexpr size_t kDevice = offsetof(Memset, deviceId);
inline constexpr size_t kStream = offsetof(Memset, streamId);
inline constexpr size_t kCorrelation = offsetof(Memset, correlationId);
inline constexpr size_t kNeeds = kCorrelation + sizeof(uint32_t);
}  // namespace memset_rec

using ExternalCorrelation = CUpti_ActivityExternalCorrelation;
namespace external {
inline constexpr size_t kExternalKind = offsetof(ExternalCorrelation, externalKind);
inline constexpr size_t kExternalId = offsetof(ExternalCorrelation, externalId);
inline constexpr size_t kCorrelation = offsetof(ExternalCorrelation, correlationId);
inline constexpr size_t kNeeds = kCorrelation + sizeof(uint32_t);
}  // namespace external
static_assert(sizeof(CUpti_ExternalCorrelationKind) == 4);

// DRIVER and RUNTIME API records (CUpti_ActivityAPI): the launch call's CPU time.
using Api = CUpti_ActivityAPI;
namespace api {
inline constexpr size_t kStart = offsetof(Api, start);
inline constexpr size_t kCorrelation = offsetof(Api, correlationId);
inline constexpr size_t kNeeds = kCorrelation + sizeof(uint32_t);
}  // namespace api

}  // namespace argus::capture::cupti::layout
