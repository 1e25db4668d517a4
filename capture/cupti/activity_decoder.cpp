#include "capture/cupti/activity_decoder.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string_view>

#include "capture/cupti/clock_sync.h"
#include "capture/cupti/record_layout.h"
#include "model/kernel_signature.h"

namespace argus::capture::cupti {

using layout::load;

namespace {

CopyKind copyKindOf(uint8_t cupti_kind) {
  switch (cupti_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return CopyKind::kHtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return CopyKind::kDtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return CopyKind::kDtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return CopyKind::kHtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return CopyKind::kPeer;
    default: return CopyKind::kUnknown;
  }
}

}  // namespace

size_t ActivityDecoder::KernelKeyHash::operator()(const KernelKey& k) const {
  uint64_t g[3];
  static_assert(sizeof(g) == sizeof(model::LaunchGeometry));
  std::memcpy(g, &k.geometry, sizeof(g));
  uint64_t h = reinterpret_cast<uintptr_t>(k.name) * 0x9E3779B97F4A7C15ull;
  h ^= (g[0] + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull;
  h ^= (g[1] + 0x8CB92BA72F3D8DD7ull) * 0x94D049BB133111EBull;
  h ^= (g[2] + 0x2545F4914F6CDD1Dull) * 0xD6E8FEB86659FD93ull;
  return static_cast<size_t>(h ^ (h >> 29));
}

ActivityDecoder::ActivityDecoder(NameTable& names, const LaunchContexts* contexts, DecoderOptions options)
    : names_(names),
      contexts_(contexts),
      joins_(std::bit_ceil(std::clamp<uint32_t>(options.correlation_slots, 2, 1u << 24))),
      join_mask_(static_cast<uint32_t>(joins_.size() - 1)),
      cache_(size_t{1} << kCacheBits) {}

ActivityDecoder::Outcome ActivityDecoder::decode(const uint8_t* record, size_t available, TraceEvent* out) {
  ++stats_.records;
  if (available < sizeof(uint32_t)) {
    ++stats_.truncated;
    return Outcome::kInvalid;
  }
  switch (load<uint32_t>(record, layout::kKindOffset)) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: return decodeKernel(record, available, out);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return decodeCopy(record, available, false, out);
    case CUPTI_ACTIVITY_KIND_MEMSET: return decodeCopy(record, available, true, out);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return decodeExternalCorrelation(record, available);
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME: return decodeApi(record, available);
    default: ++stats_.skipped_kinds; return Outcome::kSkipped;
  }
}

bool ActivityDecoder::setTimes(uint64_t start, uint64_t end, TraceEvent* e) {
  // The usual record: 0 < start <= end < 2^62 with a small offset, where no sum can overflow.
  constexpr uint64_t kFast = uint64_t{1} << 62;
  const int64_t offset = clock_.offset_ns;
  if (!clock_.scaled && start - 1 < end && end < kFast && offset > -static_cast<int64_t>(kFast) && offset < static_cast<int64_t>(kFast)) {
    e->start_ns = static_cast<int64_t>(start) + offset;
    e->end_ns = static_cast<int64_t>(end) + offset;
    if (e->start_ns > 0) return true;
  }
  if (start == 0 && end == 0) {
    ++stats_.no_timestamps;
    return false;
  }
  if (end < start || !clock_.toUnix(start, &e->start_ns) || !clock_.toUnix(end, &e->end_ns)) {
    ++stats_.bad_timestamps;
    return false;
  }
  return true;
}

bool ActivityDecoder::applyJoin(uint32_t correlation, TraceEvent* e) {
  const Join& j = joinSlot(correlation);
  if (correlation == 0 || j.correlation != correlation) return false;
  e->launch_ns = j.launch_ns;
  e->thread = j.thread;
  ++stats_.launches_joined;
  return true;
}

void ActivityDecoder::joinLaunch(uint32_t correlation, TraceEvent* e) {
  if (!applyJoin(correlation, e)) {
    e->launch_ns = kNoTime;
    e->thread = 0;
    ++stats_.launches_unjoined;
  }
}

bool ActivityDecoder::rejoin(TraceEvent* e) {
  if (!applyJoin(e->correlation, e)) return false;
  --stats_.launches_unjoined;
  return true;
}

ActivityDecoder::Outcome ActivityDecoder::decodeKernel(const uint8_t* r, size_t available, TraceEvent* out) {
  namespace k = layout::kernel;
  if (available < k::kNeeds) {
    ++stats_.truncated;
    return Outcome::kInvalid;
  }
  // Written in place (the caller's vector slot): no TraceEvent copies on the per-record path.
  TraceEvent& e = *out;
  if (!setTimes(load<uint64_t>(r, k::kStart), load<uint64_t>(r, k::kEnd), &e)) return Outcome::kInvalid;
  e.type = EventType::kKernel;
  e.device = load<uint32_t>(r, k::kDevice);
  e.stream = load<uint32_t>(r, k::kStream);
  e.correlation = load<uint32_t>(r, k::kCorrelation);
  // Six consecutive int32 (record_layout.h): grid x y z, block x y z.
  std::memcpy(&e.geometry, r + k::kGridX, sizeof(e.geometry));
  const KernelIds& ids = kernelIds(load<const char*>(r, k::kName), e.geometry);
  e.name = ids.name;
  e.id = ids.signature;
  e.bytes = 0;
  e.peer = model::CollectiveStat::kNoPeer;
  e.op = model::CollectiveOp::kOther;
  e.copy_kind = CopyKind::kUnknown;
  joinLaunch(e.correlation, &e);
  ++stats_.kernels;
  return Outcome::kEvent;
}

ActivityDecoder::Outcome ActivityDecoder::decodeCopy(const uint8_t* r, size_t available, bool memset, TraceEvent* out) {
  namespace c = layout::memcpy_rec;
  namespace s = layout::memset_rec;
  if (available < (memset ? s::kNeeds : c::kNeeds)) {
    ++stats_.truncated;
    return Outcome::kInvalid;
  }
  TraceEvent& e = *out;
  uint64_t start = load<uint64_t>(r, memset ? s::kStart : c::kStart), end = load<uint64_t>(r, memset ? s::kEnd : c::kEnd);
  if (!setTimes(start, end, &e)) return Outcome::kInvalid;
  e.type = memset ? EventType::kMemset : EventType::kMemcpy;
  e.bytes = load<uint64_t>(r, memset ? s::kBytes : c::kBytes);
  e.device = load<uint32_t>(r, memset ? s::kDevice : c::kDevice);
  e.stream = load<uint32_t>(r, memset ? s::kStream : c::kStream);
  e.correlation = load<uint32_t>(r, memset ? s::kCorrelation : c::kCorrelation);
  e.copy_kind = memset ? CopyKind::kUnknown : copyKindOf(load<uint8_t>(r, c::kCopyKind));
  e.name = 0;
  e.id = 0;
  e.geometry = {};
  e.peer = model::CollectiveStat::kNoPeer;
  e.op = model::CollectiveOp::kOther;
  joinLaunch(e.correlation, &e);
  ++(memset ? stats_.memsets : stats_.memcpys);
  return Outcome::kEvent;
}

ActivityDecoder::Outcome ActivityDecoder::decodeExternalCorrelation(const uint8_t* r, size_t available) {
  namespace x = layout::external;
  if (available < x::kNeeds) {
    ++stats_.truncated;
    return Outcome::kInvalid;
  }
  if (load<uint32_t>(r, x::kExternalKind) != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2) {
    ++stats_.foreign_correlations;
    return Outcome::kSkipped;
  }
  ++stats_.external_correlations;
  uint32_t correlation = load<uint32_t>(r, x::kCorrelation);
  LaunchContexts::Context c;
  if (correlation == 0 || contexts_ == nullptr || !contexts_->find(load<uint64_t>(r, x::kExternalId), &c)) {
    ++stats_.unknown_contexts;
    return Outcome::kInvalid;
  }
  Join& j = joinSlot(correlation);
  if (j.correlation != correlation) {
    j = {correlation, c.thread, c.ts_ns, false};
  } else {
    j.thread = c.thread;  // the API record came first: keep its launch time
    if (!j.from_api) j.launch_ns = c.ts_ns;
  }
  return Outcome::kJoined;
}

ActivityDecoder::Outcome ActivityDecoder::decodeApi(const uint8_t* r, size_t available) {
  namespace a = layout::api;
  if (available < a::kNeeds) {
    ++stats_.truncated;
    return Outcome::kInvalid;
  }
  ++stats_.api_records;
  uint32_t correlation = load<uint32_t>(r, a::kCorrelation);
  int64_t launch;
  if (correlation == 0 || !clock_.toUnix(load<uint64_t>(r, a::kStart), &launch)) {
    ++stats_.bad_timestamps;
    return Outcome::kInvalid;
  }
  Join& j = joinSlot(correlation);
  if (j.correlation != correlation) {
    j = {correlation, 0, launch, true};  // thread: from our context record, if one comes
  } else {
    j.launch_ns = launch;
    j.from_api = true;
  }
  return Outcome::kJoined;
}

const ActivityDecoder::KernelIds& ActivityDecoder::kernelIds(const char* name, const model::LaunchGeometry& geometry) {
  uint64_t g[3];
  std::memcpy(g, &geometry, sizeof(g));
  // A cheap mix for the direct-mapped cache (the map behind it hashes properly).
  uint64_t h = (reinterpret_cast<uintptr_t>(name) ^ ((g[0] ^ (g[1] << 1) ^ (g[2] << 2)) * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;
  CacheEntry& entry = cache_[h >> (64 - kCacheBits)];
  if (entry.key.name == name && entry.geometry[0] == g[0] && entry.geometry[1] == g[1] && entry.geometry[2] == g[2] && entry.used) {
    return entry.ids;
  }
  return kernelIdsSlow(KernelKey{name, geometry}, entry);
}

const ActivityDecoder::KernelIds& ActivityDecoder::kernelIdsSlow(const KernelKey& key, CacheEntry& entry) {
  auto it = kernels_.find(key);
  if (it == kernels_.end()) {
    // CUPTI owns the name and shares one pointer among all records of a kernel: read once.
    uint32_t name = key.name != nullptr ? names_.intern(std::string_view(key.name)) : 0;
    it = kernels_.emplace(key, KernelIds{name, model::kernelSignature(names_.text(name), key.geometry)}).first;
  }
  entry.key = key;
  std::memcpy(entry.geometry, &key.geometry, sizeof(entry.geometry));
  entry.ids = it->second;
  entry.used = true;
  return entry.ids;
}

size_t ActivityDecoder::decodeBuffer(NextRecordFn next, uint8_t* buffer, size_t valid, std::vector<TraceEvent>* out) {
  ++stats_.buffers;
  if (next == nullptr || buffer == nullptr || valid == 0) return 0;
  const uint8_t* end = buffer + valid;
  CUpti_Activity* record = nullptr;
  const uint8_t* previous = nullptr;
  size_t walked = 0;
  for (;;) {
    CUptiResult rc = next(buffer, valid, &record);
    if (rc == CUPTI_ERROR_MAX_LIMIT_REACHED) break;  // the normal end
    const uint8_t* r = reinterpret_cast<const uint8_t*>(record);
    if (rc != CUPTI_SUCCESS || r == nullptr || r < buffer || r >= end || r <= previous) {
      ++stats_.walk_errors;
      break;
    }
    previous = r;
    ++walked;
    // Decoded straight into the output's next slot, dropped again when no event.
    out->emplace_back();
    if (decode(r, static_cast<size_t>(end - r), &out->back()) != Outcome::kEvent) out->pop_back();
  }
  return walked;
}

}  // namespace argus::capture::cupti
