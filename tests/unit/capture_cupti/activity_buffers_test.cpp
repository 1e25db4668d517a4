// ActivityBuffers: the pool behind CUPTI's buffer callbacks, driven through the very
// functions registered with cuptiActivityRegisterCallbacks.
#include "capture/cupti/activity_buffers.h"
#include "capture/cupti/activity_handover.h"

#include <doctest/doctest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "activity_records.h"
#include "capture/cupti/activity_decoder.h"

using namespace argus::capture;
using namespace argus::capture::cupti;
using namespace argus::capture::cupti::testing;

namespace {

struct Lent {
  uint8_t* data = nullptr;
  size_t size = 0;
};

Lent request() {
  Lent l;
  size_t max_records = 99;
  ActivityBuffers::onBufferRequested(&l.data, &l.size, &max_records);
  CHECK(max_records == 0);
  return l;
}

void complete(const Lent& l, size_t valid) { ActivityBuffers::onBufferCompleted(nullptr, 0, l.data, l.size, valid); }

}  // namespace

TEST_CASE("sizes: buffers page-aligned, count = pool / buffer within bounds") {
  ActivityBuffers b({.buffer_bytes = 100'000, .pool_bytes = 1'000'000});
  CHECK(b.bufferBytes() == 102'400);  // rounded up to 4 KiB
  CHECK(b.count() == 9);
  ActivityBuffers tiny({.buffer_bytes = 10, .pool_bytes = 0});
  CHECK(tiny.bufferBytes() == 64 * 1024);
  CHECK(tiny.count() == 1);
}

TEST_CASE("the pool is bounded: once every buffer is lent, requests get none and are counted") {
  ActivityBuffers b({.buffer_bytes = 64 * 1024, .pool_bytes = 4 * 64 * 1024});
  REQUIRE(b.bind());
  std::set<uint8_t*> seen;
  std::vector<Lent> lent;
  for (int i = 0; i < 4; ++i) {
    Lent l = request();
    REQUIRE(l.data != nullptr);
    CHECK(l.size == 64 * 1024);
    CHECK(reinterpret_cast<uintptr_t>(l.data) % 8 == 0);
    seen.insert(l.data);
    lent.push_back(l);
  }
  CHECK(seen.size() == 4);
  CHECK(b.lent() == 4);
  for (int i = 0; i < 3; ++i) {
    Lent none = request();
    CHECK(none.data == nullptr);
    CHECK(none.size == 0);
  }
  CHECK(b.stats().requests == 7);
  CHECK(b.stats().refused == 3);
  // A buffer handed back and drained is lent again.
  complete(lent[2], 100);
  ActivityBuffers::Completed c;
  REQUIRE(b.popCompleted(&c));
  CHECK(c.data == lent[2].data);
  CHECK(c.valid == 100);
  CHECK(request().data == nullptr);  // completed but not yet recycled: still not free
  b.recycle(c);
  lent[2] = request();
  CHECK(lent[2].data == c.data);
  CHECK(b.stats().refused == 4);
  // Handed back empty, as a forced flush at exit does: the block can be freed.
  for (const Lent& l : lent) complete(l, 0);
  CHECK(b.lent() == 0);
}

TEST_CASE("completions we must not trust") {
  ActivityBuffers b({.buffer_bytes = 64 * 1024, .pool_bytes = 2 * 64 * 1024});
  REQUIRE(b.bind());
  Lent l = request();
  ActivityBuffers::Completed c;
  SUBCASE("another client's buffer is left alone") {
    std::vector<uint8_t> theirs(4096);
    ActivityBuffers::onBufferCompleted(nullptr, 0, theirs.data(), theirs.size(), 100);
    ActivityBuffers::onBufferCompleted(nullptr, 0, l.data + 8, l.size, 100);  // inside ours, not a buffer start
    ActivityBuffers::onBufferCompleted(nullptr, 0, nullptr, 0, 0);
    CHECK(b.stats().foreign == 3);
    CHECK_FALSE(b.popCompleted(&c));
    CHECK(b.lent() == 1);
  }
  SUBCASE("a guest's buffer goes to the guest's completion callback") {
    // torch.profiler's buffers completed after our callbacks replaced its own.
    std::vector<uint8_t> theirs(4096);
    ActivityHandover::Calls cupti;
    cupti.registerCallbacks = [](CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) { return CUPTI_SUCCESS; };
    static std::vector<std::pair<uint8_t*, size_t>> guest_got;
    guest_got.clear();
    ActivityHandover::instance().guestRegister(
        cupti, [](uint8_t**, size_t*, size_t*) {},
        [](CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) { guest_got.emplace_back(buffer, valid); });
    ActivityBuffers::onBufferCompleted(nullptr, 0, theirs.data(), theirs.size(), 100);
    ActivityBuffers::onBufferCompleted(nullptr, 0, l.data + 8, l.size, 100);  // inside ours: not the guest's
    CHECK(guest_got == std::vector<std::pair<uint8_t*, size_t>>{{theirs.data(), 100}});
    CHECK(b.stats().foreign == 2);
    CHECK(ActivityHandover::instance().stats().forwarded >= 1);
  }
  SUBCASE("a buffer handed back twice, or never lent") {
    complete(l, 64);
    complete(l, 64);
    // The free list hands out buffer 0 first: buffer 1 was never lent.
    ActivityBuffers::onBufferCompleted(nullptr, 0, l.data + b.bufferBytes(), b.bufferBytes(), 64);
    CHECK(b.stats().bad_completions == 2);
    CHECK(b.stats().completions == 1);
    REQUIRE(b.popCompleted(&c));
    CHECK(c.data == l.data);
    CHECK_FALSE(b.popCompleted(&c));
  }
  SUBCASE("validSize beyond the buffer is clamped to it") {
    complete(l, size_t{1} << 40);
    REQUIRE(b.popCompleted(&c));
    CHECK(c.valid == b.bufferBytes());
  }
  SUBCASE("an empty buffer goes straight back to the pool") {
    complete(l, 0);
    CHECK_FALSE(b.popCompleted(&c));
    CHECK(b.stats().empty_completions == 1);
    CHECK(b.lent() == 0);
    Lent again[2] = {request(), request()};
    CHECK(again[0].data != nullptr);
    CHECK(again[1].data != nullptr);
    CHECK(request().data == nullptr);
    complete(again[0], 0);
    complete(again[1], 0);
  }
  if (b.lent() == 1) complete(l, 0);  // still lent (the foreign subcase): hand it back
  CHECK(b.lent() == 0);
}

TEST_CASE("without a bound instance CUPTI gets no buffer; only one instance binds") {
  Lent l = request();
  CHECK(l.data == nullptr);
  ActivityBuffers a({}), b({});
  REQUIRE(a.bind());
  CHECK(a.bound());
  CHECK_FALSE(b.bind());
  a.unbind();
  CHECK(b.bind());
  CHECK(b.bound());
}

TEST_CASE("the real completion path: CUPTI's callbacks, real records, the real walker, drained in order") {
  const CuptiApi& api = realCupti();
  REQUIRE(api.loaded());
  ActivityBuffers b({.buffer_bytes = 64 * 1024, .pool_bytes = 3 * 64 * 1024});
  REQUIRE(b.bind());
  NameTable names;
  ActivityDecoder d(names, nullptr);
  const uint64_t t0 = 1'796'000'000'000'000'000ull;
  // Two buffers, filled the way CUPTI fills them (records back to back), handed back in order.
  for (int buffer = 0; buffer < 2; ++buffer) {
    Lent l = request();
    REQUIRE(l.data != nullptr);
    size_t at = 0;
    for (int i = 0; i < 200; ++i) {
      uint32_t corr = static_cast<uint32_t>(buffer * 1000 + i);
      auto k = kernelRecord(t0 + corr * 100, t0 + corr * 100 + 50, corr, i % 2 ? "odd" : "even");
      std::memcpy(l.data + at, &k, sizeof(k));
      at += sizeof(k);
      auto m = memcpyRecord(t0 + corr * 100 + 60, t0 + corr * 100 + 70, corr, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, corr);
      std::memcpy(l.data + at, &m, sizeof(m));
      at += sizeof(m);
    }
    complete(l, at);
  }
  std::vector<TraceEvent> events;
  ActivityBuffers::Completed c;
  int buffers = 0;
  while (b.popCompleted(&c)) {
    d.decodeBuffer(api.activityGetNextRecord, c.data, c.valid, &events);
    b.recycle(c);
    ++buffers;
  }
  CHECK(buffers == 2);
  REQUIRE(events.size() == 800);
  for (size_t i = 0; i < events.size(); ++i) {
    uint32_t corr = static_cast<uint32_t>((i / 400) * 1000 + (i % 400) / 2);
    const TraceEvent& e = events[i];
    CHECK(e.correlation == corr);
    if (i % 2 == 0) {
      CHECK(e.type == EventType::kKernel);
      CHECK(e.start_ns == static_cast<int64_t>(t0 + corr * 100));
      CHECK(names.text(e.name) == ((i / 2) % 2 ? "odd" : "even"));
    } else {
      CHECK(e.type == EventType::kMemcpy);
      CHECK(e.bytes == corr);
      CHECK(e.copy_kind == CopyKind::kDtoH);
    }
  }
  CHECK(b.lent() == 0);
  CHECK(b.stats().valid_bytes == 2 * 200 * (216 + 96));
}

TEST_CASE("adopt: another client's buffer, larger than ours, copied as runs of whole records, decoded alike") {
  // torch.profiler's buffers (Kineto: 4 MB) while our source has lent it the API.
  const CuptiApi& api = realCupti();
  REQUIRE(api.loaded());
  ActivityBuffers b({.buffer_bytes = 64 * 1024, .pool_bytes = 8 * 64 * 1024});
  const uint64_t t0 = 1'796'000'000'000'000'000ull;
  RecordBuffer theirs;
  for (uint32_t corr = 1; corr <= 600; ++corr) {  // ~184 KiB: three of our buffers at least
    theirs.add(kernelRecord(t0 + corr * 100, t0 + corr * 100 + 50, corr, "guest_kernel"));
    theirs.add(memcpyRecord(t0 + corr * 100 + 60, t0 + corr * 100 + 70, corr, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, corr));
  }
  NameTable names;
  ActivityDecoder direct(names, nullptr), adopted(names, nullptr);
  std::vector<TraceEvent> want, got;
  direct.decodeBuffer(api.activityGetNextRecord, theirs.bytes(), theirs.size, &want);
  REQUIRE(want.size() == 1200);

  CHECK(b.adopt(theirs.bytes(), theirs.size, api.activityGetNextRecord) == theirs.size);
  ActivityBuffers::Completed c;
  int buffers = 0;
  while (b.popCompleted(&c)) {
    CHECK(c.valid <= b.bufferBytes());
    CHECK(c.valid % 8 == 0);
    adopted.decodeBuffer(api.activityGetNextRecord, c.data, c.valid, &got);
    b.recycle(c);
    ++buffers;
  }
  CHECK(buffers >= 3);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].correlation == want[i].correlation);
    CHECK(got[i].type == want[i].type);
    CHECK(got[i].start_ns == want[i].start_ns);
  }
  CHECK(adopted.stats().truncated == 0);
  CHECK(b.stats().adopted == static_cast<uint64_t>(buffers));

  // A pool with too few free buffers: the rest is dropped and counted, the guest's untouched.
  ActivityBuffers small({.buffer_bytes = 64 * 1024, .pool_bytes = 2 * 64 * 1024});
  std::vector<uint64_t> before = theirs.storage;
  size_t copied = small.adopt(theirs.bytes(), theirs.size, api.activityGetNextRecord);
  CHECK(copied > 0);
  CHECK(copied <= 2 * 64 * 1024);
  CHECK(small.stats().adopt_refused == 1);
  CHECK(theirs.storage == before);
  CHECK(small.adopt(nullptr, 100, api.activityGetNextRecord) == 0);

  // A walker that never advances ends the walk (what was walked is copied).
  ActivityBuffers stuck({.buffer_bytes = 64 * 1024, .pool_bytes = 2 * 64 * 1024});
  auto same = [](uint8_t* data, size_t, CUpti_Activity** r) {
    *r = reinterpret_cast<CUpti_Activity*>(data);
    return CUPTI_SUCCESS;
  };
  CHECK(stuck.adopt(theirs.bytes(), 4096, same) == 4096);
}

TEST_CASE("concurrent requests and completions from many threads, drained by one: nothing lost or duplicated") {
  ActivityBuffers b({.buffer_bytes = 64 * 1024, .pool_bytes = 8 * 64 * 1024});
  REQUIRE(b.bind());
  std::atomic<bool> done{false};
  std::atomic<uint64_t> handed_back{0};
  std::vector<std::thread> producers;
  for (int t = 0; t < 4; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < 20000; ++i) {
        Lent l = request();
        if (l.data == nullptr) continue;
        // Stamp the buffer so the drainer can check it got what this thread wrote.
        uint64_t stamp = static_cast<uint64_t>(t) << 32 | static_cast<uint32_t>(i);
        std::memcpy(l.data, &stamp, 8);
        complete(l, 8 + (i % 7) * 8);
        handed_back.fetch_add(1);
      }
    });
  }
  uint64_t drained = 0;
  bool valid_ok = true;
  std::thread drainer([&] {
    ActivityBuffers::Completed c;
    for (;;) {
      bool got = b.popCompleted(&c);
      if (got) {
        valid_ok &= c.valid >= 8 && c.valid <= 56 && c.valid % 8 == 0;
        b.recycle(c);
        ++drained;
      } else if (done.load()) {
        if (!b.popCompleted(&c)) break;
        b.recycle(c);
        ++drained;
      }
    }
  });
  for (auto& p : producers) p.join();
  done.store(true);
  drainer.join();
  CHECK(valid_ok);
  CHECK(drained == handed_back.load());
  CHECK(b.lent() == 0);
  BufferStats s = b.stats();
  CHECK(s.requests == 80000);
  CHECK(s.completions + s.refused == 80000);
  CHECK(s.bad_completions == 0);
  CHECK(s.foreign == 0);
}

TEST_CASE("every completed buffer carries the clock epoch of its completion") {
  ActivityBuffers pool({.buffer_bytes = 64 * 1024, .pool_bytes = 4 * 64 * 1024});
  REQUIRE(pool.bind());
  auto complete = [] {
    uint8_t* data = nullptr;
    size_t size = 0, max_records = 0;
    ActivityBuffers::onBufferRequested(&data, &size, &max_records);
    REQUIRE(data != nullptr);
    ActivityBuffers::onBufferCompleted(nullptr, 0, data, size, 64);
  };
  CHECK(pool.clockEpoch() == 0);
  complete();
  CHECK(pool.newClockEpoch() == 1);
  complete();
  complete();
  ActivityBuffers::Completed c;
  std::vector<uint32_t> epochs;
  while (pool.popCompleted(&c)) {
    epochs.push_back(c.clock_epoch);
    pool.recycle(c);
  }
  CHECK(epochs == std::vector<uint32_t>{0, 1, 1});
  pool.unbind();
}
