// The flight recorder keeps a bounded ring and dumps Chrome-trace JSON that parses and
// holds the expected events.
#include "capture/flight_recorder.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "capture/step_assembler.h"
#include "event_stream.h"

using namespace argus::capture;
using namespace argus::capture::testing;
using Json = nlohmann::json;

namespace {

EventStream twoSteps() {
  EventStream s;
  for (int step = 0; step < 2; ++step) {
    int64_t b = 1'700'000'000'000'000'000 + step * 10'000;
    s.push("ProfilerStep#" + std::to_string(step), b);
    s.push("forward", b + 100);
    s.kernel("gemm \"quoted\" \x01\xff", b + 1000, b + 2500, 7, b + 200, 1);
    s.pop(b + 3000);
    s.mark("checkpoint", b + 4000);
    s.sample(99, b + 5000);
    s.memcpy(CopyKind::kHtoD, b + 6000, b + 6100, 4096);
    s.pop(b + 10'000);
  }
  s.push("ProfilerStep#2", 1'700'000'000'000'020'000);  // never popped
  return s;
}

}  // namespace

TEST_CASE("chrome trace: parses, pids and tids, exact times, names escaped") {
  EventStream s = twoSteps();
  FlightRecorder fr;
  Collected c;
  StepAssembler a(s.names, {}, [&](const StepOutput& out) { fr.stepEnded(out.record.step, out.record.start_ns, out.record.end_ns); });
  for (const TraceEvent& e : s.events) {
    fr.record(e);
    a.onEvent(e);
  }
  a.flush();
  std::string json;
  ChromeTraceOptions opt;
  opt.rank = 3;
  REQUIRE(fr.writeChromeTrace(s.names, opt, &json).isOk());
  Json doc = Json::parse(json);  // throws on malformed JSON
  const int64_t base = 1'700'000'000'000'000'000;
  CHECK(doc["otherData"]["base_time_ns"].get<int64_t>() == base);
  int kernels = 0, ranges = 0, marks = 0, samples = 0, copies = 0, open_slices = 0, meta = 0;
  for (const Json& ev : doc["traceEvents"]) {
    std::string ph = ev["ph"], name = ev.value("name", "");
    if (ph == "M") {
      ++meta;
    } else if (ph == "X" && ev.value("cat", "") == "kernel") {
      ++kernels;
      CHECK(name == "gemm \"quoted\" \x01\xef\xbf\xbd");
      CHECK(ev["pid"] == ChromeTraceOptions::kGpuPidBase + 3000);
      CHECK(ev["tid"] == 7);
      CHECK(ev["dur"].get<double>() == doctest::Approx(1.5));
    } else if (ph == "X" && ev.value("cat", "") == "gpu_memcpy") {
      ++copies;
      CHECK(ev["args"]["bytes"] == 4096);
    } else if (ph == "X") {
      ++ranges;
      CHECK(ev["pid"] == 3);
      CHECK(ev["tid"] == 1);
      if (name == "ProfilerStep#1") CHECK(ev["ts"].get<double>() == doctest::Approx(10.0));
    } else if (ph == "i" && name == "checkpoint") {
      ++marks;
    } else if (ph == "i") {
      ++samples;
      CHECK(ev["args"]["stack_id"] == 99);
    } else if (ph == "B") {
      ++open_slices;
    }
  }
  CHECK(meta == 2);
  CHECK(kernels == 2);
  CHECK(copies == 2);
  CHECK(ranges == 4);  // two steps, two forward
  CHECK(marks == 2);
  CHECK(samples == 2);
  CHECK(open_slices == 1);  // ProfilerStep#2, never popped (flushed as a partial step)

  // One step only.
  json.clear();
  opt.from_step = opt.to_step = 1;
  REQUIRE(fr.writeChromeTrace(s.names, opt, &json).isOk());
  doc = Json::parse(json);
  kernels = 0;
  for (const Json& ev : doc["traceEvents"]) kernels += ev.value("cat", "") == "kernel";
  CHECK(kernels == 1);
  opt.from_step = opt.to_step = 7;
  json.clear();
  CHECK(fr.writeChromeTrace(s.names, opt, &json).code() == argus::Status::Code::kNotFound);
}

TEST_CASE("the ring is bounded by bytes and keeps the newest events; steps by count") {
  FlightRecorderOptions o;
  o.max_bytes = 10 * sizeof(TraceEvent);
  o.max_steps = 2;
  FlightRecorder fr(o);
  CHECK(fr.capacityEvents() == 10);
  NameTable names;
  uint32_t k = names.intern("k");
  for (int i = 0; i < 25; ++i) {
    TraceEvent e;
    e.name = k;
    e.start_ns = i * 100;
    e.end_ns = i * 100 + 50;
    fr.record(e);
  }
  CHECK(fr.sizeEvents() == 10);
  for (uint64_t step = 0; step < 5; ++step) fr.stepEnded(step, static_cast<int64_t>(step) * 500, static_cast<int64_t>(step + 1) * 500);
  CHECK(fr.keptSteps() == std::vector<uint64_t>{3, 4});
  std::string json;
  REQUIRE(fr.writeChromeTrace(names, {}, &json).isOk());
  Json doc = Json::parse(json);
  std::vector<double> ts;
  for (const Json& ev : doc["traceEvents"]) {
    if (ev["ph"] == "X") ts.push_back(ev["ts"].get<double>());
  }
  // Steps 3 and 4 kept: [1500, 2500); the ring holds events 15..24 (1500..2400).
  REQUIRE(ts.size() == 10);
  CHECK(ts.front() == 0.0);
  CHECK(ts.back() == doctest::Approx(0.9));  // µs
  CHECK(fr.writeChromeTrace(names, {.rank = 0, .from_step = 0, .to_step = 2}, &json).code() == argus::Status::Code::kNotFound);
}
