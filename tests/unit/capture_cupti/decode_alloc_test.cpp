// In steady state the CUPTI source allocates nothing: not in CUPTI's buffer callbacks (which
// run on training threads), not per record or per buffer in drain(). Names and kernel
// variants cost an allocation the first time only. This executable replaces operator new.
#include <doctest/doctest.h>

#include "tests/unit/alloc_counter.h"

#include <cstring>
#include <span>

#include "activity_records.h"
#include "capture/cupti/cupti_source.h"

using argus::testing::allocationCount;
using namespace argus::capture;
using namespace argus::capture::cupti;
using namespace argus::capture::cupti::testing;

namespace {

struct CountingSink : EventSink {
  size_t events = 0;
  void onEvents(std::span<const TraceEvent> batch) override { events += batch.size(); }
};

// Fills one buffer through CUPTI's request / completion callbacks, as CUPTI would.
void fillOne(uint64_t t0, uint32_t first_corr) {
  static const char* const kNames[] = {"gemm_a", "gemm_b", "softmax", "layernorm", "ncclDevKernel_AllReduce"};
  uint8_t* data = nullptr;
  size_t size = 0, max_records = 0;
  ActivityBuffers::onBufferRequested(&data, &size, &max_records);
  REQUIRE(data != nullptr);
  size_t at = 0;
  for (uint32_t i = 0; at + sizeof(CUpti_ActivityKernel10) + sizeof(CUpti_ActivityMemcpy6) <= size; ++i) {
    auto k = kernelRecord(t0 + i * 100, t0 + i * 100 + 60, first_corr + i, kNames[i % 5]);
    k.gridX = 100 + static_cast<int32_t>(i % 3);
    std::memcpy(data + at, &k, sizeof(k));
    at += sizeof(k);
    if (i % 8 == 0) {
      auto m = memcpyRecord(t0 + i * 100 + 70, t0 + i * 100 + 80, 4096, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, first_corr + i);
      std::memcpy(data + at, &m, sizeof(m));
      at += sizeof(m);
    }
  }
  ActivityBuffers::onBufferCompleted(nullptr, 0, data, size, at);
}

}  // namespace

TEST_CASE("steady state: no allocation in the buffer callbacks or in drain()") {
  NameTable names;
  CuptiSourceOptions opt;
  opt.buffers = {.buffer_bytes = 256 * 1024, .pool_bytes = 4 * 256 * 1024};
  CuptiSource source(names, opt);
  REQUIRE(source.load().isOk());
  CountingSink sink;
  // Warm: names interned, kernel variants hashed, and the events that wait for their launch
  // records (none come here: each waits one later batch) at their steady count.
  for (int round = 0; round < 3; ++round) {
    fillOne(1'796'000'000'000'000'000ull + round * 1'000'000ull, 1 + round * 10'000);
    fillOne(1'796'000'000'500'000'000ull + round * 1'000'000ull, 50'000 + round * 10'000);
    source.drain(sink);
  }
  REQUIRE(sink.events > 1000);
  long before = allocationCount();
  for (int round = 0; round < 20; ++round) {
    fillOne(1'796'000'001'000'000'000ull + round * 1'000'000'000ull, 100'000 + round * 10'000);
    fillOne(1'796'000'001'500'000'000ull + round * 1'000'000'000ull, 200'000 + round * 10'000);
    source.drain(sink);
  }
  CHECK(allocationCount() - before == 0);
  CHECK(source.stats().buffers.refused == 0);
}
