// ActivityDecoder: CUPTI activity records -> capture::TraceEvent (docs/capture/cupti.md).
//
// decode() is a plain function of one record's bytes (plus the decoder's caches): tests
// feed it records laid out by the toolkit's own structs. decodeBuffer() walks a buffer
// CUPTI handed back with cuptiActivityGetNextRecord (the walker knows each kind's record
// size for the library version that wrote it) and decodes every record.
//
// Record kinds:
//   CONCURRENT_KERNEL, KERNEL -> kKernel: [start, end) on (device, stream), grid and block
//       geometry, name interned (cached by CUPTI's name pointer, which all records of a
//       kernel share), signature computed once per (name, geometry).
//   MEMCPY -> kMemcpy (bytes, copy kind); MEMSET -> kMemset (bytes).
//   EXTERNAL_CORRELATION of kind CUSTOM2 (ours; CUSTOM0/1 are Kineto's) and DRIVER /
//       RUNTIME API records -> no event: they join a CUPTI correlation id to its launch,
//       which the GPU records of that correlation id then carry as launch_ns and thread.
//   anything else -> skipped, counted.
// Times are converted to Unix ns with the clock map (clock_sync.h). A record too short
// for the fields we read, without timestamps, or with end < start gives no event and is
// counted; nothing in a record can make the decoder read outside [record, record+available)
// except the kernel's name pointer, which CUPTI owns (a null one reads as no name).
//
// Not thread-safe: the draining thread owns the decoder and the NameTable it interns into.
#pragma once

#include <cupti_activity.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "capture/cupti/clock_sync.h"
#include "capture/cupti/launch_contexts.h"
#include "capture/name_table.h"
#include "capture/trace_event.h"

namespace argus::capture::cupti {

struct DecoderOptions {
  // Correlation ids whose launch we remember until their GPU records arrive: a direct-mapped
  // table (rounded up to a power of two). It must exceed the launches CUPTI has recorded
  // but not yet delivered the GPU records of (launch queue depth plus a flush interval).
  uint32_t correlation_slots = 1u << 16;
};

struct DecodeStats {
  uint64_t buffers = 0;
  uint64_t records = 0;
  uint64_t kernels = 0;
  uint64_t memcpys = 0;
  uint64_t memsets = 0;
  uint64_t external_correlations = 0;  // ours (CUSTOM2)
  uint64_t foreign_correlations = 0;   // other external kinds (Kineto's CUSTOM0/1, OpenACC ...)
  uint64_t api_records = 0;            // DRIVER / RUNTIME
  uint64_t skipped_kinds = 0;          // records of kinds we do not use
  uint64_t truncated = 0;              // shorter than the fields we read
  uint64_t no_timestamps = 0;          // CUPTI could not time it (start = end = 0)
  uint64_t bad_timestamps = 0;         // end < start, or not a Unix time after the offset
  uint64_t unknown_contexts = 0;       // a CUSTOM2 id not (or no longer) in LaunchContexts
  uint64_t launches_joined = 0;        // GPU records that got launch_ns
  uint64_t launches_unjoined = 0;      // ... and those that did not
  uint64_t walk_errors = 0;            // buffers whose walk ended on a CUPTI error
};

class ActivityDecoder {
 public:
  // `names` and `contexts` must outlive the decoder; contexts may be null (no tagging).
  ActivityDecoder(NameTable& names, const LaunchContexts* contexts, DecoderOptions options = {});

  // Maps every record decoded from now on onto Unix ns (clock_sync.h).
  void setClock(const ClockMap& clock) { clock_ = clock; }

  enum class Outcome : uint8_t {
    kEvent,    // *out is a GPU event
    kJoined,   // a launch record: remembered for later GPU records, no event
    kSkipped,  // a kind (or external-correlation kind) we do not use
    kInvalid,  // too short, or unusable times: counted in stats()
  };
  // Decodes the record at `record`, of which `available` bytes may be read (the rest of
  // the buffer's valid bytes). Sets every field of *out for kEvent; otherwise *out may be
  // partly written and means nothing.
  Outcome decode(const uint8_t* record, size_t available, TraceEvent* out);

  using NextRecordFn = CUptiResult(CUPTIAPI*)(uint8_t*, size_t, CUpti_Activity**);
  // Walks `valid` bytes of `buffer` with `next` and appends the GPU events to *out, in
  // buffer order. Returns the number of records walked. Never reads past buffer + valid:
  // a record the walker places outside, or a walker that stops advancing, ends the walk.
  size_t decodeBuffer(NextRecordFn next, uint8_t* buffer, size_t valid, std::vector<TraceEvent>* out);

  // Joins a GPU event decoded without its launch (launch_ns kNoTime) if the record that
  // carries the launch has been decoded since: CUPTI writes a launch's API record when the
  // call returns, often after a short kernel's own record, and CUPTI 13 writes it into the
  // launching thread's own buffer, which can come back after the GPU records' buffer.
  // True when joined (the event then counts as joined, no longer as unjoined).
  bool rejoin(TraceEvent* e);

  const DecodeStats& stats() const { return stats_; }

 private:
  struct Join {
    uint32_t correlation = 0;  // 0: empty slot
    uint32_t thread = 0;
    int64_t launch_ns = 0;
    bool from_api = false;  // launch_ns is the launch call's own time, not its context's
  };
  struct KernelKey {
    const char* name;
    model::LaunchGeometry geometry;
    bool operator==(const KernelKey&) const = default;
  };
  struct KernelKeyHash {
    size_t operator()(const KernelKey& k) const;
  };
  struct KernelIds {
    uint32_t name = 0;
    uint64_t signature = 0;
  };
  struct CacheEntry {
    KernelKey key{nullptr, {}};
    uint64_t geometry[3] = {};  // key.geometry as three words: the hit test compares these
    KernelIds ids;
    bool used = false;
  };

  Outcome decodeKernel(const uint8_t* r, size_t available, TraceEvent* out);
  Outcome decodeCopy(const uint8_t* r, size_t available, bool memset, TraceEvent* out);
  Outcome decodeExternalCorrelation(const uint8_t* r, size_t available);
  Outcome decodeApi(const uint8_t* r, size_t available);
  // Sets [start_ns, end_ns) from CUPTI times; false (counted) when unusable.
  bool setTimes(uint64_t start, uint64_t end, TraceEvent* e);
  // Sets e's launch and thread from the join of `correlation` (counted joined); false when none.
  bool applyJoin(uint32_t correlation, TraceEvent* e);
  void joinLaunch(uint32_t correlation, TraceEvent* e);
  Join& joinSlot(uint32_t correlation) { return joins_[correlation & join_mask_]; }
  const KernelIds& kernelIds(const char* name, const model::LaunchGeometry& geometry);
  const KernelIds& kernelIdsSlow(const KernelKey& key, CacheEntry& entry);

  NameTable& names_;
  const LaunchContexts* contexts_;
  ClockMap clock_;
  DecodeStats stats_;
  std::vector<Join> joins_;
  uint32_t join_mask_;
  // (name pointer, geometry) -> ids: a direct-mapped cache in front of a map that holds
  // every pair seen (each distinct kernel variant is interned and hashed once).
  static constexpr uint32_t kCacheBits = 12;
  std::vector<CacheEntry> cache_;
  std::unordered_map<KernelKey, KernelIds, KernelKeyHash> kernels_;
};

}  // namespace argus::capture::cupti
