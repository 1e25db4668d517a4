// Record: what a training thread writes into its ring for one NVTX call (docs/capture/nvtx.md,
// "Per-thread rings"). 32 bytes, one ring slot; a name definition or thread name carries its
// text in the slots that follow it. The drain (nvtx_drain.h) turns records into TraceEvents.
//
// In-memory only, between threads of one process: free to renumber.
#pragma once

#include <cstdint>
#include <type_traits>

namespace argus::capture::nvtx {

enum class RecordKind : uint8_t {
  kPush,        // range push in `domain` at ts_ns (name, payload)
  kPop,         // pop of the innermost recorded push of `domain` on this thread
  kStart,       // nvtxRangeStart: range id in `ext` (name, payload)
  kEnd,         // nvtxRangeEnd: range id in `ext` (from any thread)
  kMark,        // instant (name, payload)
  kDefine,      // the thread's name-cache slot `name` now means (domain, text of `ext` bytes)
  kThreadName,  // nvtxNameOsThread: OS thread `payload` is called text (`ext` bytes)
};

// NVTX payload types as nvToolsExt.h numbers them (nvtxPayloadType_t); 0 = no payload.
enum class PayloadType : uint8_t { kNone = 0, kUint64 = 1, kInt64 = 2, kDouble = 3, kUint32 = 4, kInt32 = 5, kFloat = 6 };

struct Payload {
  PayloadType type = PayloadType::kNone;
  uint64_t bits = 0;  // the value's bytes as NVTX's payload union holds them
  bool isInteger() const {
    return type == PayloadType::kUint64 || type == PayloadType::kInt64 || type == PayloadType::kUint32 || type == PayloadType::kInt32;
  }
  // The integer value, sign-extended. REQUIRES: isInteger().
  int64_t integer() const {
    switch (type) {
      case PayloadType::kUint32:
        return static_cast<uint32_t>(bits);
      case PayloadType::kInt32:
        return static_cast<int32_t>(static_cast<uint32_t>(bits));
      default:
        return static_cast<int64_t>(bits);
    }
  }
};

// How a record names its event. 0: no name. kRegisteredBit | id: a string registered with
// nvtxDomainRegisterString (Registry id). Otherwise 1 + the slot of the writing thread's
// name cache (NameCache), defined by an earlier kDefine record of the same thread.
inline constexpr uint32_t kRegisteredBit = 1u << 31;

struct Record {
  int64_t ts_ns = 0;     // Unix-epoch ns of the call (EpochClock)
  uint64_t payload = 0;  // Payload::bits; kThreadName: the OS thread id
  uint64_t ext = 0;      // kStart / kEnd: range id; kDefine / kThreadName: text bytes
  uint32_t name = 0;     // name reference (above); kDefine: the slot reference it defines
  uint16_t domain = 0;   // Registry domain index, 0 = NVTX's default domain
  RecordKind kind = RecordKind::kMark;
  PayloadType payload_type = PayloadType::kNone;
};

static_assert(sizeof(Record) == 32, "one record per 32-byte ring slot");
static_assert(std::is_trivially_copyable_v<Record>);

// Ring slots a text of `bytes` occupies after its record.
inline constexpr uint32_t textSlots(uint32_t bytes) {
  return (bytes + sizeof(Record) - 1) / sizeof(Record);
}

}  // namespace argus::capture::nvtx
