// CuptiSource on this machine (libcupti, no driver): the loader, the one-line degrade to
// "GPU tracing off", and the drain path from CUPTI's callbacks to an EventSink.
#include "capture/cupti/cupti_source.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "activity_records.h"
#include "capture/nvtx/nvtx_recorder.h"  // RangeListener only (a plain struct): no link to the NVTX part

using namespace argus;
using namespace argus::capture;
using namespace argus::capture::cupti;
using namespace argus::capture::cupti::testing;

namespace {

std::vector<std::string> g_log;
void captureLog(const char* line) { g_log.emplace_back(line); }

struct CollectingSink : EventSink {
  std::vector<TraceEvent> events;
  int calls = 0;
  void onEvents(std::span<const TraceEvent> batch) override {
    ++calls;
    events.insert(events.end(), batch.begin(), batch.end());
  }
};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("loader: the toolkit's libcupti loads; a wrong override is an error naming it") {
  CuptiApi api;
  Status s = loadCuptiApi({}, &api);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  CHECK(contains(api.library, "libcupti"));
  CHECK(api.loaded());
  CHECK(bool(api.activityGetNextRecord));
  CHECK(bool(api.activityPushExternalCorrelationId));

  s = loadCuptiApi({.override_path = "/nonexistent/libcupti.so.13"}, &api);
  CHECK(s.code() == Status::Code::kUnavailable);
  CHECK(contains(s.message(), "/nonexistent/libcupti.so.13"));
  CHECK_FALSE(api.loaded());

  s = loadCuptiApi({.override_path = "libc.so.6"}, &api);  // loads, but is no CUPTI
  CHECK(s.code() == Status::Code::kUnavailable);
  CHECK(contains(s.message(), "libcupti lacks cuptiGetTimestamp"));
  CHECK_FALSE(api.loaded());
}

TEST_CASE("error text: CUPTI's name, or ours, and the code; the driverless hint for 999") {
  CuptiApi api;
  REQUIRE(loadCuptiApi({}, &api).isOk());
  CHECK(contains(cuptiResultText(api, CUPTI_ERROR_UNKNOWN), "(999)"));
  CHECK(contains(cuptiResultText(api, CUPTI_ERROR_UNKNOWN), "UNKNOWN"));
  CHECK(cuptiStatus(api, CUPTI_SUCCESS, "x").isOk());
  Status s = ARGUS_CUPTI_CALL(api, activityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  REQUIRE_FALSE(s.isOk());
  CHECK(contains(s.message(), "activityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL): "));
  CHECK(contains(s.message(), "(999) (no usable NVIDIA driver or GPU?)"));
}

TEST_CASE("start() without a driver: GPU tracing off, one log line, nothing running") {
  g_log.clear();
  NameTable names;
  CuptiSourceOptions opt;
  opt.log = captureLog;
  CuptiSource source(names, opt);
  Status s = source.start();
  CHECK(s.code() == Status::Code::kUnavailable);
  CHECK(contains(s.message(), "CUPTI_ERROR_UNKNOWN"));
  REQUIRE(g_log.size() == 1);
  CHECK(g_log[0].rfind("GPU tracing off: ", 0) == 0);
  CHECK(contains(g_log[0], "cuptiActivityEnable"));
  CHECK_FALSE(source.running());
  // The NVTX hook costs nothing and tags nothing while off.
  for (int i = 0; i < 100; ++i) source.onRangeChange(7, 1000 + i);
  CuptiSourceStats st = source.stats();
  CHECK(st.range_changes == 0);
  CHECK_FALSE(st.running);
  // The NVTX recorder's listener type takes our adapter as it is.
  const nvtx::RangeListener listener{&CuptiSource::rangeListener, &source};
  listener.onRangeChange(listener.context, 7, 2000);
  CHECK(source.stats().range_changes == 0);
  source.setLaunchAttribution(true);  // not running: stays off
  source.onRangeChange(7, 3000);
  CHECK(source.stats().range_changes == 0);
  source.stop();
  source.stop();
  CHECK(g_log.size() == 1);
  // A retry degrades the same way (one more line), never a crash.
  CHECK_FALSE(source.start().isOk());
  CHECK(g_log.size() == 2);
}

TEST_CASE("start() without libcupti: GPU tracing off, the line says what was tried") {
  g_log.clear();
  NameTable names;
  CuptiSourceOptions opt;
  opt.log = captureLog;
  opt.library.override_path = "/opt/none/libcupti.so.13";
  CuptiSource source(names, opt);
  Status s = source.start();
  CHECK_FALSE(s.isOk());
  REQUIRE(g_log.size() == 1);
  CHECK(contains(g_log[0], "GPU tracing off: cannot load libcupti: /opt/none/libcupti.so.13 ("));
  NameTable names2;
  CollectingSink sink;
  CHECK(source.drain(sink) == 0);
  CHECK(sink.calls == 0);
}

TEST_CASE("drain: buffers handed back through CUPTI's callbacks reach the sink, one call per buffer") {
  NameTable names;
  CuptiSourceOptions opt;
  opt.buffers = {.buffer_bytes = 64 * 1024, .pool_bytes = 4 * 64 * 1024};
  opt.launch_attribution = false;  // no event waits for its launch record
  CuptiSource source(names, opt);
  REQUIRE(source.load().isOk());
  NameTable other_names;
  CuptiSource second(other_names);
  CHECK(second.load().code() == Status::Code::kAborted);  // one source owns the callbacks

  const uint64_t t0 = 1'796'000'000'000'000'000ull;
  for (int buffer = 0; buffer < 3; ++buffer) {
    uint8_t* data = nullptr;
    size_t size = 0, max_records = 0;
    ActivityBuffers::onBufferRequested(&data, &size, &max_records);
    REQUIRE(data != nullptr);
    auto k = kernelRecord(t0 + buffer * 1000, t0 + buffer * 1000 + 400, 10 + buffer, "flash_fwd_kernel");
    auto m = memsetRecord(t0 + buffer * 1000 + 500, t0 + buffer * 1000 + 510, 1024, 20 + buffer);
    std::memcpy(data, &k, sizeof(k));
    std::memcpy(data + sizeof(k), &m, sizeof(m));
    ActivityBuffers::onBufferCompleted(nullptr, 0, data, size, buffer == 2 ? 0 : sizeof(k) + sizeof(m));
  }
  CollectingSink sink;
  CHECK(source.drain(sink) == 4);
  CHECK(sink.calls == 2);  // the empty third buffer makes no call
  REQUIRE(sink.events.size() == 4);
  CHECK(sink.events[0].type == EventType::kKernel);
  CHECK(sink.events[0].start_ns == static_cast<int64_t>(t0));
  CHECK(names.text(sink.events[0].name) == "flash_fwd_kernel");
  CHECK(sink.events[1].type == EventType::kMemset);
  CHECK(sink.events[1].bytes == 1024);
  CHECK(sink.events[2].correlation == 11);
  CHECK(sink.events[3].correlation == 21);
  CHECK(source.drain(sink) == 0);
  CuptiSourceStats st = source.stats();
  CHECK(st.buffers.completions == 2);
  CHECK(st.buffers.empty_completions == 1);
  CHECK(st.decode.kernels == 2);
  CHECK(st.decode.memsets == 2);
  CHECK(st.decode.buffers == 2);
}

namespace {

// Hands `records` back through CUPTI's callbacks as one buffer.
void completeBuffer(RecordBuffer& records) {
  uint8_t* data = nullptr;
  size_t size = 0, max_records = 0;
  ActivityBuffers::onBufferRequested(&data, &size, &max_records);
  REQUIRE(data != nullptr);
  REQUIRE(records.size <= size);
  std::memcpy(data, records.bytes(), records.size);
  ActivityBuffers::onBufferCompleted(nullptr, 0, data, size, records.size);
}

}  // namespace

TEST_CASE("drain: a GPU event waits for a launch record decoded after it, for one later batch at most") {
  // CUPTI 13 writes a launch's API record into the launching thread's own buffer when the
  // call returns: a thread that never calls NVTX (PyTorch's autograd thread) gets no
  // external correlation record first, and the kernel's record can come back before it.
  NameTable names;
  CuptiSourceOptions opt;
  opt.buffers = {.buffer_bytes = 64 * 1024, .pool_bytes = 4 * 64 * 1024};
  CuptiSource source(names, opt);
  REQUIRE(source.load().isOk());
  const uint64_t t0 = 1'796'000'000'000'000'000ull;
  CollectingSink sink;

  RecordBuffer first;  // kernel 10's launch record comes later; kernel 11's came first; 12 never
  first.add(kernelRecord(t0 + 1000, t0 + 2000, 10, "k10"));
  first.add(apiRecord(t0 + 50, t0 + 60, 11));
  first.add(kernelRecord(t0 + 2000, t0 + 3000, 11, "k11"));
  first.add(kernelRecord(t0 + 3000, t0 + 4000, 12, "k12"));
  completeBuffer(first);
  CHECK(source.drain(sink) == 1);
  REQUIRE(sink.events.size() == 1);
  CHECK(sink.events[0].correlation == 11);
  CHECK(sink.events[0].launch_ns == static_cast<int64_t>(t0 + 50));

  RecordBuffer second;  // the launching thread's buffer
  second.add(apiRecord(t0 + 40, t0 + 45, 10));
  completeBuffer(second);
  // Kernel 10, joined; kernel 12 has waited one later batch for its record: given on unjoined.
  CHECK(source.drain(sink) == 2);
  REQUIRE(sink.events.size() == 3);
  CHECK(sink.events[1].correlation == 10);
  CHECK(sink.events[1].launch_ns == static_cast<int64_t>(t0 + 40));
  CHECK(sink.events[2].correlation == 12);
  CHECK(sink.events[2].launch_ns == kNoTime);

  RecordBuffer third;
  third.add(kernelRecord(t0 + 5000, t0 + 6000, 13, "k13"));
  completeBuffer(third);
  CHECK(source.drain(sink) == 0);  // 13 waits
  CHECK(source.drain(sink) == 0);  // no new batch: still waiting
  CHECK(source.drain(sink, true) == 1);  // at exit nothing waits
  CHECK(sink.events.back().correlation == 13);
  CuptiSourceStats st = source.stats();
  CHECK(st.decode.launches_joined == 2);
  CHECK(st.decode.launches_unjoined == 2);
}

namespace {

// Kineto's timestamp callback reads the TSC: here 2.5 ticks per ns of CLOCK_REALTIME.
uint64_t CUPTIAPI fakeTsc() { return static_cast<uint64_t>(realtimeNs() - 1'700'000'000'000'000'000) * 5 / 2 + 1'000'000; }
// A second tick clock, 4 ticks per ns from another origin: a guest that replaces the first.
uint64_t CUPTIAPI fasterTsc() { return static_cast<uint64_t>(realtimeNs() - 1'700'000'000'000'000'000) * 4 + 7'000'000; }
CUptiResult acceptTimestampCallback(CUpti_TimestampCallbackFunc) { return CUPTI_SUCCESS; }

// A loaded source attached to the process's handover, which guests install their clocks
// through; detached at the end with CUPTI's own clock back (the handover outlives it).
struct GuestClocks {
  NameTable names;
  CuptiSource source{names, [] {
                       CuptiSourceOptions opt;
                       opt.buffers = {.buffer_bytes = 64 * 1024, .pool_bytes = 4 * 64 * 1024};
                       opt.launch_attribution = false;
                       return opt;
                     }()};
  ActivityHandover& handover = ActivityHandover::instance();
  ActivityHandover::Calls calls;
  GuestClocks() {
    REQUIRE(source.load().isOk());
    handover.attach(&source);
    calls.registerTimestamp = acceptTimestampCallback;
  }
  ~GuestClocks() {
    handover.detach(&source);
    CHECK(handover.guestTimestampCallback(calls, nullptr) == CUPTI_SUCCESS);
  }
  void install(CUpti_TimestampCallbackFunc ticks) { REQUIRE(handover.guestTimestampCallback(calls, ticks) == CUPTI_SUCCESS); }
  // One kernel record lasting `ticks` from `start`, completed as a buffer.
  static void completeKernel(uint64_t start, uint64_t ticks, uint32_t correlation) {
    RecordBuffer b;
    b.add(kernelRecord(start, start + ticks, correlation, "k"));
    completeBuffer(b);
  }
};

}  // namespace

TEST_CASE("guests' timestamp callbacks: buffers decode on the clock of their epoch, CUPTI's or a guest's, two changes in one drain period too") {
  // torch.profiler's first session installs Kineto's TSC reader for the rest of the process:
  // every record from then on is stamped in CPU ticks (an H200 run lost 85% of its kernels
  // to times read as ns).
  GuestClocks g;
  const uint64_t t0 = 1'796'000'000'000'000'000ull;
  GuestClocks::completeKernel(t0, 1000, 1);
  g.install(fakeTsc);
  const int64_t first_when = realtimeNs();
  GuestClocks::completeKernel(fakeTsc(), 2'500, 2);  // 1,000 ns
  CHECK(g.source.stats().guest_ns_per_tick == doctest::Approx(0.4).epsilon(0.01));
  g.install(fasterTsc);
  const int64_t second_when = realtimeNs();
  GuestClocks::completeKernel(fasterTsc(), 4'000, 3);  // 1,000 ns

  CollectingSink sink;
  CHECK(g.source.drain(sink) == 3);
  REQUIRE(sink.events.size() == 3);
  CHECK(sink.events[0].start_ns == static_cast<int64_t>(t0));
  CHECK(sink.events[1].start_ns > 0);
  CHECK(std::abs(sink.events[1].start_ns - first_when) < 5'000'000);
  CHECK(sink.events[1].end_ns - sink.events[1].start_ns == doctest::Approx(1000).epsilon(0.02));
  CHECK(std::abs(sink.events[2].start_ns - second_when) < 5'000'000);
  CHECK(sink.events[2].end_ns - sink.events[2].start_ns == doctest::Approx(1000).epsilon(0.02));
  CuptiSourceStats st = g.source.stats();
  CHECK(st.guest_clock);
  CHECK(st.guest_ns_per_tick == doctest::Approx(0.25).epsilon(0.01));
  CHECK(st.clock_epochs == 2);
  CHECK(st.decode.bad_timestamps == 0);
}
