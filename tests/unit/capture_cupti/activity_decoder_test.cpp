// ActivityDecoder over records laid out by the toolkit's structs: each record kind to the
// field, launch joins, the 12.x kernel layout, and hostile records.
#include "capture/cupti/activity_decoder.h"

#include <doctest/doctest.h>

#include "activity_records.h"
#include "model/kernel_signature.h"

using namespace argus::capture;
using namespace argus::capture::cupti;
using namespace argus::capture::cupti::testing;

namespace {

constexpr uint64_t kT0 = 1'796'000'000'000'000'000ull;  // a 2026 CUPTI timestamp (CLOCK_REALTIME ns)

template <typename Record>
ActivityDecoder::Outcome decodeOne(ActivityDecoder& d, const Record& r, TraceEvent* out) {
  RecordBuffer b;
  b.add(r);
  return d.decode(b.bytes(), b.size, out);
}

bool sameEvent(const TraceEvent& a, const TraceEvent& b) {
  return a.start_ns == b.start_ns && a.end_ns == b.end_ns && a.launch_ns == b.launch_ns && a.id == b.id && a.bytes == b.bytes &&
         a.name == b.name && a.correlation == b.correlation && a.device == b.device && a.stream == b.stream && a.thread == b.thread &&
         a.peer == b.peer && a.geometry == b.geometry && a.type == b.type && a.op == b.op && a.copy_kind == b.copy_kind;
}

}  // namespace

TEST_CASE("every field of the event is written, whatever the slot held before") {
  NameTable names;
  ActivityDecoder d(names, nullptr);
  TraceEvent expected_kernel, expected_copy, expected_set;
  REQUIRE(decodeOne(d, kernelRecord(kT0 + 1, kT0 + 2, 3, "k"), &expected_kernel) == ActivityDecoder::Outcome::kEvent);
  REQUIRE(decodeOne(d, memcpyRecord(kT0 + 1, kT0 + 2, 3, 1, 4), &expected_copy) == ActivityDecoder::Outcome::kEvent);
  REQUIRE(decodeOne(d, memsetRecord(kT0 + 1, kT0 + 2, 3, 4), &expected_set) == ActivityDecoder::Outcome::kEvent);
  TraceEvent garbage;
  std::memset(static_cast<void*>(&garbage), 0xAB, sizeof(garbage));
  TraceEvent e = garbage;
  REQUIRE(decodeOne(d, kernelRecord(kT0 + 1, kT0 + 2, 3, "k"), &e) == ActivityDecoder::Outcome::kEvent);
  CHECK(sameEvent(e, expected_kernel));
  CHECK(e.peer == argus::model::CollectiveStat::kNoPeer);
  e = garbage;
  REQUIRE(decodeOne(d, memcpyRecord(kT0 + 1, kT0 + 2, 3, 1, 4), &e) == ActivityDecoder::Outcome::kEvent);
  CHECK(sameEvent(e, expected_copy));
  CHECK(e.name == 0);
  CHECK(e.id == 0);
  CHECK(e.geometry == argus::model::LaunchGeometry{});
  e = garbage;
  REQUIRE(decodeOne(d, memsetRecord(kT0 + 1, kT0 + 2, 3, 4), &e) == ActivityDecoder::Outcome::kEvent);
  CHECK(sameEvent(e, expected_set));
  CHECK(e.copy_kind == CopyKind::kUnknown);
}

TEST_CASE("a CUpti_ActivityKernel10 record becomes a kKernel event, every field") {
  NameTable names;
  ActivityDecoder d(names, nullptr);
  d.setClock({.offset_ns = -250});
  const char* name = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >(int, float*)";
  TraceEvent e;
  REQUIRE(decodeOne(d, kernelRecord(kT0 + 1000, kT0 + 4500, 77, name, 3, 19), &e) == ActivityDecoder::Outcome::kEvent);
  CHECK(e.type == EventType::kKernel);
  CHECK(e.start_ns == static_cast<int64_t>(kT0 + 1000 - 250));
  CHECK(e.end_ns == static_cast<int64_t>(kT0 + 4500 - 250));
  CHECK(e.device == 3);
  CHECK(e.stream == 19);
  CHECK(e.correlation == 77);
  CHECK(e.geometry == argus::model::LaunchGeometry{108, 2, 1, 256, 1, 1});
  CHECK(names.text(e.name) == name);
  CHECK(e.id == argus::model::kernelSignature(name, e.geometry));
  CHECK(e.launch_ns == kNoTime);  // no launch record joined
  CHECK(e.thread == 0);
  CHECK(e.bytes == 0);
  CHECK(d.stats().kernels == 1);
  CHECK(d.stats().launches_unjoined == 1);
}

TEST_CASE("the CUDA 12.x kernel record (CUpti_ActivityKernel9, 208 bytes) decodes the same") {
  NameTable names;
  ActivityDecoder d(names, nullptr);
  CUpti_ActivityKernel9 k;
  std::memset(&k, 0, sizeof(k));
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = kT0 + 10;
  k.end = kT0 + 30;
  k.deviceId = 2;
  k.streamId = 5;
  k.gridX = 4, k.gridY = 5, k.gridZ = 6, k.blockX = 32, k.blockY = 2, k.blockZ = 1;
  k.correlationId = 9;
  k.name = "gemm_v12";
  TraceEvent e;
  REQUIRE(decodeOne(d, k, &e) == ActivityDecoder::Outcome::kEvent);
  CHECK(e.start_ns == static_cast<int64_t>(kT0 + 10));
  CHECK(e.end_ns == static_cast<int64_t>(kT0 + 30));
  CHECK(e.device == 2);
  CHECK(e.stream == 5);
  CHECK(e.correlation == 9);
  CHECK(e.geometry == argus::model::LaunchGeometry{4, 5, 6, 32, 2, 1});
  CHECK(names.text(e.name) == "gemm_v12");
}

TEST_CASE("memcpy and memset records become kMemcpy / kMemset with bytes and copy kind") {
  NameTable names;
  ActivityDecoder d(names, nullptr);
  struct Case {
    uint8_t cupti;
    CopyKind ours;
  };
  const Case cases[] = {{CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CopyKind::kHtoD}, {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CopyKind::kDtoH},
                        {CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CopyKind::kDtoD}, {CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, CopyKind::kHtoH},
                        {CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, CopyKind::kPeer}, {CUPTI_ACTIVITY_MEMCPY_KIND_ATOD, CopyKind::kDtoD},
                        {CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, CopyKind::kHtoD}, {CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, CopyKind::kDtoH},
                        {CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, CopyKind::kUnknown}, {200, CopyKind::kUnknown}};
  for (const Case& c : cases) {
    TraceEvent e;
    REQUIRE(decodeOne(d, memcpyRecord(kT0 + 100, kT0 + 900, 1 << 20, c.cupti, 5), &e) == ActivityDecoder::Outcome::kEvent);
    CHECK(e.type == EventType::kMemcpy);
    CHECK(e.copy_kind == c.ours);
    CHECK(e.bytes == (1u << 20));
    CHECK(e.start_ns == static_cast<int64_t>(kT0 + 100));
    CHECK(e.end_ns == static_cast<int64_t>(kT0 + 900));
    CHECK(e.stream == 13);
    CHECK(e.correlation == 5);
    CHECK(e.name == 0);
  }
  TraceEvent e;
  REQUIRE(decodeOne(d, memsetRecord(kT0 + 5, kT0 + 8, 4096, 6), &e) == ActivityDecoder::Outcome::kEvent);
  CHECK(e.type == EventType::kMemset);
  CHECK(e.bytes == 4096);
  CHECK(e.device == 1);
  CHECK(e.stream == 21);
  CHECK(e.correlation == 6);
  CHECK(e.start_ns == static_cast<int64_t>(kT0 + 5));
  CHECK(e.end_ns == static_cast<int64_t>(kT0 + 8));
  CHECK(d.stats().memcpys == 10);
  CHECK(d.stats().memsets == 1);
}

TEST_CASE("launch join: our external correlation gives the thread, the API record the launch time") {
  NameTable names;
  LaunchContexts contexts(64);
  ActivityDecoder d(names, &contexts);
  d.setClock({.offset_ns = 100});
  const int64_t range_change = static_cast<int64_t>(kT0) + 500;  // Unix ns, as the NVTX source gives it
  uint64_t id = contexts.open(/*thread=*/4242, range_change);
  TraceEvent e;

  SUBCASE("context only: launch_ns is the range change") {
    CHECK(decodeOne(d, externalRecord(id, 31), &e) == ActivityDecoder::Outcome::kJoined);
    REQUIRE(decodeOne(d, kernelRecord(kT0 + 2000, kT0 + 3000, 31, "k"), &e) == ActivityDecoder::Outcome::kEvent);
    CHECK(e.thread == 4242);
    CHECK(e.launch_ns == range_change);
  }
  SUBCASE("context then API record: the launch call's own time, converted") {
    CHECK(decodeOne(d, externalRecord(id, 31), &e) == ActivityDecoder::Outcome::kJoined);
    CHECK(decodeOne(d, apiRecord(kT0 + 1200, kT0 + 1300, 31), &e) == ActivityDecoder::Outcome::kJoined);
    REQUIRE(decodeOne(d, kernelRecord(kT0 + 2000, kT0 + 3000, 31, "k"), &e) == ActivityDecoder::Outcome::kEvent);
    CHECK(e.thread == 4242);
    CHECK(e.launch_ns == static_cast<int64_t>(kT0 + 1200 + 100));
  }
  SUBCASE("API record then context: the API time is kept") {
    CHECK(decodeOne(d, apiRecord(kT0 + 1200, kT0 + 1300, 31, CUPTI_ACTIVITY_KIND_DRIVER), &e) == ActivityDecoder::Outcome::kJoined);
    CHECK(decodeOne(d, externalRecord(id, 31), &e) == ActivityDecoder::Outcome::kJoined);
    REQUIRE(decodeOne(d, memcpyRecord(kT0 + 2000, kT0 + 3000, 64, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 31), &e) ==
            ActivityDecoder::Outcome::kEvent);
    CHECK(e.thread == 4242);
    CHECK(e.launch_ns == static_cast<int64_t>(kT0 + 1200 + 100));
  }
  SUBCASE("API record alone: the launch time, thread unknown") {
    CHECK(decodeOne(d, apiRecord(kT0 + 1200, kT0 + 1300, 31), &e) == ActivityDecoder::Outcome::kJoined);
    REQUIRE(decodeOne(d, memsetRecord(kT0 + 2000, kT0 + 3000, 64, 31), &e) == ActivityDecoder::Outcome::kEvent);
    CHECK(e.thread == 0);
    CHECK(e.launch_ns == static_cast<int64_t>(kT0 + 1300));
  }
  SUBCASE("Kineto's kinds (CUSTOM0/1) are not ours") {
    CHECK(decodeOne(d, externalRecord(id, 31, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0), &e) == ActivityDecoder::Outcome::kSkipped);
    CHECK(decodeOne(d, externalRecord(id, 31, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1), &e) == ActivityDecoder::Outcome::kSkipped);
    REQUIRE(decodeOne(d, kernelRecord(kT0 + 2000, kT0 + 3000, 31, "k"), &e) == ActivityDecoder::Outcome::kEvent);
    CHECK(e.launch_ns == kNoTime);
    CHECK(d.stats().foreign_correlations == 2);
  }
  SUBCASE("a context overwritten in the ring (or never opened) joins nothing") {
    for (int i = 0; i < 64; ++i) contexts.open(1, range_change + i);
    CHECK(decodeOne(d, externalRecord(id, 31), &e) == ActivityDecoder::Outcome::kInvalid);
    CHECK(decodeOne(d, externalRecord(987654321, 32), &e) == ActivityDecoder::Outcome::kInvalid);
    CHECK(d.stats().unknown_contexts == 2);
    REQUIRE(decodeOne(d, kernelRecord(kT0 + 2000, kT0 + 3000, 31, "k"), &e) == ActivityDecoder::Outcome::kEvent);
    CHECK(e.launch_ns == kNoTime);
  }
  SUBCASE("a correlation id that reuses a slot replaces the old join") {
    DecoderOptions small;
    small.correlation_slots = 4;
    ActivityDecoder d4(names, &contexts, small);
    CHECK(decodeOne(d4, externalRecord(id, 3), &e) == ActivityDecoder::Outcome::kJoined);
    uint64_t other = contexts.open(7, range_change + 50);
    CHECK(decodeOne(d4, externalRecord(other, 7), &e) == ActivityDecoder::Outcome::kJoined);  // slot 3 too
    REQUIRE(decodeOne(d4, kernelRecord(kT0 + 2000, kT0 + 3000, 3, "k"), &e) == ActivityDecoder::Outcome::kEvent);
    CHECK(e.launch_ns == kNoTime);
    REQUIRE(decodeOne(d4, kernelRecord(kT0 + 2000, kT0 + 3000, 7, "k"), &e) == ActivityDecoder::Outcome::kEvent);
    CHECK(e.thread == 7);
    CHECK(e.launch_ns == range_change + 50);
  }
}

TEST_CASE("kernel names: one id per text, one signature per (name, geometry)") {
  NameTable names;
  ActivityDecoder d(names, nullptr);
  static const char a1[] = "sm90_xmma_gemm";
  static const char a2[] = "sm90_xmma_gemm";  // the same text at another address (another module)
  TraceEvent e1, e2, e3, e4;
  REQUIRE(decodeOne(d, kernelRecord(kT0, kT0 + 1, 1, a1), &e1) == ActivityDecoder::Outcome::kEvent);
  REQUIRE(decodeOne(d, kernelRecord(kT0, kT0 + 1, 2, a2), &e2) == ActivityDecoder::Outcome::kEvent);
  auto wide = kernelRecord(kT0, kT0 + 1, 3, a1);
  wide.gridX = 216;
  REQUIRE(decodeOne(d, wide, &e3) == ActivityDecoder::Outcome::kEvent);
  REQUIRE(decodeOne(d, kernelRecord(kT0, kT0 + 1, 4, nullptr), &e4) == ActivityDecoder::Outcome::kEvent);
  CHECK(e1.name == e2.name);
  CHECK(e1.id == e2.id);
  CHECK(e3.name == e1.name);
  CHECK(e3.id != e1.id);
  CHECK(e3.id == argus::model::kernelSignature(a1, {216, 2, 1, 256, 1, 1}));
  CHECK(e4.name == 0);
  CHECK(names.size() == 2);  // "" and the one text
  // Thousands of distinct kernels (more than the direct-mapped cache) keep their ids.
  std::vector<std::string> many;
  for (int i = 0; i < 10000; ++i) many.push_back("kernel_" + std::to_string(i));
  std::vector<uint32_t> ids;
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < 10000; ++i) {
      TraceEvent e;
      REQUIRE(decodeOne(d, kernelRecord(kT0, kT0 + 1, 5, many[i].c_str()), &e) == ActivityDecoder::Outcome::kEvent);
      if (pass == 0) ids.push_back(e.name);
      else CHECK_MESSAGE(e.name == ids[i], "kernel ", i);
      CHECK(names.text(e.name) == many[i]);
    }
  }
}

TEST_CASE("unusable records give no event and are counted") {
  NameTable names;
  ActivityDecoder d(names, nullptr);
  TraceEvent e;
  SUBCASE("no timestamps") {
    CHECK(decodeOne(d, kernelRecord(0, 0, 1, "k"), &e) == ActivityDecoder::Outcome::kInvalid);
    CHECK(d.stats().no_timestamps == 1);
  }
  SUBCASE("end before start, a zero start, beyond int64, negative after the offset") {
    CHECK(decodeOne(d, kernelRecord(kT0 + 10, kT0 + 5, 1, "k"), &e) == ActivityDecoder::Outcome::kInvalid);
    CHECK(decodeOne(d, kernelRecord(0, kT0, 1, "k"), &e) == ActivityDecoder::Outcome::kInvalid);
    CHECK(decodeOne(d, memcpyRecord(UINT64_MAX - 5, UINT64_MAX, 1, 1, 1), &e) == ActivityDecoder::Outcome::kInvalid);
    d.setClock({.offset_ns = -static_cast<int64_t>(kT0) - 100});
    CHECK(decodeOne(d, memsetRecord(kT0 + 10, kT0 + 20, 1, 1), &e) == ActivityDecoder::Outcome::kInvalid);
    CHECK(d.stats().bad_timestamps == 4);
  }
  SUBCASE("truncated: fewer bytes than the fields read, for every kind and length") {
    RecordBuffer b;
    b.add(kernelRecord(kT0, kT0 + 1, 1, "k"));
    for (size_t n = 0; n < 112; ++n) CHECK(d.decode(b.bytes(), n, &e) == ActivityDecoder::Outcome::kInvalid);
    CHECK(d.decode(b.bytes(), 112, &e) == ActivityDecoder::Outcome::kEvent);  // name is the last field read
    RecordBuffer m;
    m.add(memcpyRecord(kT0, kT0 + 1, 1, 1, 1));
    for (size_t n = 0; n < 48; ++n) CHECK(d.decode(m.bytes(), n, &e) == ActivityDecoder::Outcome::kInvalid);
    CHECK(d.decode(m.bytes(), 48, &e) == ActivityDecoder::Outcome::kEvent);
    RecordBuffer x;
    x.add(externalRecord(1, 1));
    for (size_t n = 4; n < 20; ++n) CHECK(d.decode(x.bytes(), n, &e) == ActivityDecoder::Outcome::kInvalid);
    RecordBuffer a;
    a.add(apiRecord(kT0, kT0 + 1, 1));
    for (size_t n = 4; n < 36; ++n) CHECK(d.decode(a.bytes(), n, &e) == ActivityDecoder::Outcome::kInvalid);
    CHECK(d.stats().truncated == 112 + 48 + 16 + 32);
  }
  SUBCASE("kinds we do not use") {
    CUpti_ActivityOverhead3 o;
    std::memset(&o, 0, sizeof(o));
    o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    CHECK(decodeOne(d, o, &e) == ActivityDecoder::Outcome::kSkipped);
    uint32_t junk[4] = {0x7fffffffu, 1, 2, 3};
    CHECK(d.decode(reinterpret_cast<const uint8_t*>(junk), sizeof(junk), &e) == ActivityDecoder::Outcome::kSkipped);
    CHECK(d.stats().skipped_kinds == 2);
  }
}

TEST_CASE("decodeBuffer walks a mixed buffer with the real cuptiActivityGetNextRecord") {
  const CuptiApi& api = realCupti();
  REQUIRE_MESSAGE(api.loaded(), "libcupti from the toolkit must load (it does without a driver)");
  NameTable names;
  LaunchContexts contexts(64);
  ActivityDecoder d(names, &contexts);
  uint64_t fwd = contexts.open(11, static_cast<int64_t>(kT0) + 10);
  RecordBuffer b;
  b.add(externalRecord(fwd, 100));
  b.add(apiRecord(kT0 + 20, kT0 + 25, 100));
  b.add(externalRecord(fwd, 101));
  b.add(apiRecord(kT0 + 30, kT0 + 35, 101, CUPTI_ACTIVITY_KIND_DRIVER));
  b.add(memcpyRecord(kT0 + 40, kT0 + 90, 8192, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 100));
  b.add(kernelRecord(kT0 + 100, kT0 + 400, 101, "fwd_gemm"));
  b.add(memsetRecord(kT0 + 500, kT0 + 510, 256, 102));
  std::vector<TraceEvent> events;
  CHECK(d.decodeBuffer(api.activityGetNextRecord, b.bytes(), b.size, &events) == 7);
  REQUIRE(events.size() == 3);
  CHECK(events[0].type == EventType::kMemcpy);
  CHECK(events[0].launch_ns == static_cast<int64_t>(kT0 + 20));
  CHECK(events[0].thread == 11);
  CHECK(events[1].type == EventType::kKernel);
  CHECK(names.text(events[1].name) == "fwd_gemm");
  CHECK(events[1].launch_ns == static_cast<int64_t>(kT0 + 30));
  CHECK(events[1].thread == 11);
  CHECK(events[2].type == EventType::kMemset);
  CHECK(events[2].launch_ns == kNoTime);
  CHECK(d.stats().records == 7);
  CHECK(d.stats().walk_errors == 0);
  CHECK(d.stats().launches_joined == 2);
  CHECK(d.stats().launches_unjoined == 1);
}

TEST_CASE("hostile buffers through the real walker: truncated, unknown kinds, random bytes") {
  const CuptiApi& api = realCupti();
  REQUIRE(api.loaded());
  NameTable names;
  ActivityDecoder d(names, nullptr);
  RecordBuffer b;
  b.add(kernelRecord(kT0 + 1, kT0 + 2, 1, "a"));
  b.add(memcpyRecord(kT0 + 3, kT0 + 4, 5, 1, 2));
  b.add(kernelRecord(kT0 + 5, kT0 + 6, 3, "b"));
  std::vector<TraceEvent> events;
  SUBCASE("cut at every length: only whole records decode") {
    for (size_t n = 0; n <= b.size; ++n) {
      events.clear();
      d.decodeBuffer(api.activityGetNextRecord, b.bytes(), n, &events);
      size_t whole = n >= 528 ? 3 : n >= 312 ? 2 : n >= 216 ? 1 : 0;
      CHECK_MESSAGE(events.size() == whole, "valid bytes ", n);
    }
  }
  SUBCASE("an unknown kind ends the walk (CUPTI cannot know its size)") {
    uint32_t bad = 0x4000;
    std::memcpy(b.bytes() + 216, &bad, 4);
    d.decodeBuffer(api.activityGetNextRecord, b.bytes(), b.size, &events);
    CHECK(events.size() == 1);
    CHECK(d.stats().walk_errors == 1);
  }
  SUBCASE("random bytes, with a valid kind now and then; never a crash") {
    uint64_t x = 0x9E3779B97F4A7C15ull;
    auto next = [&] { x ^= x << 13, x ^= x >> 7, x ^= x << 17; return x; };
    const uint32_t kinds[] = {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                              CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_OVERHEAD};
    std::vector<uint64_t> buf(4096);
    for (int round = 0; round < 300; ++round) {
      for (uint64_t& w : buf) w = next();
      // Plant record heads of kinds without pointers (the kernel name pointer is CUPTI's).
      for (size_t off = 0; off < buf.size(); off += 1 + next() % 16) {
        uint32_t kind = kinds[next() % 6];
        std::memcpy(reinterpret_cast<uint8_t*>(buf.data() + off), &kind, 4);
      }
      events.clear();
      size_t valid = next() % (buf.size() * 8 + 1);
      d.decodeBuffer(api.activityGetNextRecord, reinterpret_cast<uint8_t*>(buf.data()), valid, &events);
      for (const TraceEvent& e : events) {
        CHECK(e.end_ns >= e.start_ns);
        CHECK(e.start_ns > 0);
      }
    }
  }
}
