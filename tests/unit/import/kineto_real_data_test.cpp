// Every real trace in ../shared/data/kineto imports with the step and kernel counts that an
// independent reading of the same JSON (a DOM parse, doubles, no importer code) gives, in
// the importer's order, whose records are those of plain time order.
#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "import/import_stats.h"
#include "import/kineto_reader.h"
#include "import/trace_replay.h"

namespace fs = std::filesystem;
using namespace argus;

namespace {

std::string sharedData() {
  const char* dir = std::getenv("ARGUS_SHARED_DATA");
  REQUIRE_MESSAGE(dir != nullptr, "ARGUS_SHARED_DATA is not set (run under ctest)");
  return dir;
}

std::vector<std::string> kinetoFiles() {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(sharedData() + "/kineto")) {
    if (entry.is_regular_file() && entry.path().string().ends_with(".json.gz")) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  REQUIRE(f != nullptr);
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

// Counts straight from the JSON: step markers (CPU-side ProfilerStep# annotations; the GPU
// copies Kineto writes as gpu_user_annotation are not steps), kernels, and the kernels
// whose launch (the cuda_runtime / cuda_driver call with the same correlation; else the
// kernel's own start) lies inside a step.
struct Expected {
  uint64_t steps = 0, kernels = 0, kernels_in_steps = 0, raw_bytes = 0;
  bool has_rank = false;
  uint32_t rank = 0;
};

Expected countFromJson(const std::string& path) {
  std::string text = gunzip(path);
  nlohmann::json doc = nlohmann::json::parse(text);
  Expected x;
  x.raw_bytes = text.size();
  if (doc.contains("distributedInfo") && doc["distributedInfo"].contains("rank")) {
    x.has_rank = true;
    x.rank = doc["distributedInfo"]["rank"].get<uint32_t>();
  }
  std::vector<std::pair<double, double>> steps;
  std::map<uint64_t, double> launch_us;
  for (const auto& e : doc["traceEvents"]) {
    std::string cat = e.value("cat", "");
    if ((cat == "cuda_runtime" || cat == "cuda_driver") && e.contains("args") && e["args"].contains("correlation")) {
      launch_us.emplace(e["args"]["correlation"].get<uint64_t>(), e["ts"].get<double>());
    }
    if (cat == "user_annotation" && e.value("name", "").rfind("ProfilerStep#", 0) == 0) {
      steps.push_back({e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
    }
  }
  x.steps = steps.size();
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("cat", "") != "kernel") continue;
    ++x.kernels;
    double key = e["ts"].get<double>();
    if (e.contains("args") && e["args"].contains("correlation")) {
      auto it = launch_us.find(e["args"]["correlation"].get<uint64_t>());
      if (it != launch_us.end()) key = it->second;
    }
    for (const auto& [b, end] : steps) {
      if (key >= b && key < end) {
        ++x.kernels_in_steps;
        break;
      }
    }
  }
  return x;
}

// The importer's order (kineto_reader.h): each side in time order, no GPU event ahead of a
// later CPU event, no CPU event more than a slice ahead of GPU work after it. Returns the
// events out of that order.
size_t outOfSliceOrder(const std::vector<capture::TraceEvent>& events) {
  auto onCpu = [](const capture::TraceEvent& e) { return !e.isGpuActivity() && e.type != capture::EventType::kCollective; };
  int64_t cpu_max = INT64_MIN, gpu_max = INT64_MIN;
  size_t bad = 0;
  for (const capture::TraceEvent& e : events) {
    if (onCpu(e)) {
      bad += e.start_ns < cpu_max || e.start_ns < gpu_max;
      cpu_max = e.start_ns;
    } else {
      bad += e.start_ns < gpu_max || (cpu_max != INT64_MIN && e.start_ns <= cpu_max - import::kCpuLeadNs);
      gpu_max = e.start_ns;
    }
  }
  return bad;
}

}  // namespace

TEST_CASE("every real Kineto trace imports with the step and kernel counts of its JSON") {
  std::vector<std::string> files = kinetoFiles();
  REQUIRE(files.size() == 16);  // 8 dlrm ranks, 2 hta ranks, 6 single-rank traces
  size_t reordered = 0;
  for (const std::string& path : files) {
    CAPTURE(path);
    Expected x = countFromJson(path);
    auto trace = import::readKinetoTrace(path);
    REQUIRE_MESSAGE(trace.isOk(), trace.status().toString());
    CHECK(trace->raw_bytes == x.raw_bytes);
    CHECK(trace->counts.kernels == x.kernels);
    CHECK(trace->counts.step_markers == x.steps);
    CHECK(trace->rank.has_value() == x.has_rank);
    if (x.has_rank) CHECK(*trace->rank == x.rank);

    std::vector<model::StepRecord> records;
    import::StepRecordChecker checker(trace->names, trace->events);
    capture::AssemblerStats as = import::replayTrace(trace->names, trace->events, import::importAssemblerOptions(trace->rank.value_or(0)),
                                                     [&](const capture::StepOutput& out) {
                                                       records.push_back(out.record);
                                                       checker.add(out.record);
                                                     });
    CHECK(as.kernels == x.kernels);  // every kernel reached the assembler
    CHECK(as.late_events == 0);
    CHECK(as.invalid_events == 0);
    import::ImportStats stats = checker.finish();
    CHECK(stats.count_mismatches == 0);
    CHECK(stats.total_max_abs_error_ns == 0);
    CHECK(stats.p50_max_rel_error <= 0.0101);
    CHECK(stats.p99_max_rel_error <= 0.0101);
    CHECK(stats.kernel_total_max_rel_error <= 0.0101);  // sketch totals: within the sketch's error
    if (x.steps > 0) {
      CHECK(records.size() == x.steps);
      CHECK(stats.kernels == x.kernels_in_steps);
      for (const auto& r : records) CHECK((r.flags & model::kStepInferred) == 0);
    } else {
      // No ProfilerStep markers (the vLLM trace): steps are inferred and say so.
      CHECK(records.size() > 0);
      CHECK(as.steps_inferred == records.size());
      for (const auto& r : records) CHECK((r.flags & model::kStepInferred) != 0);
    }

    // The importer feeds CPU events a slice ahead of GPU work; the records are those of
    // plain time order.
    CHECK(outOfSliceOrder(trace->events) == 0);
    std::vector<capture::TraceEvent> by_time = trace->events;
    std::stable_sort(by_time.begin(), by_time.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
    reordered += !std::equal(trace->events.begin(), trace->events.end(), by_time.begin(), by_time.end(),
                             [](const auto& a, const auto& b) { return a.start_ns == b.start_ns && a.type == b.type && a.name == b.name; });
    std::vector<model::StepRecord> timed_records;
    capture::AssemblerStats timed = import::replayTrace(trace->names, by_time, import::importAssemblerOptions(trace->rank.value_or(0)),
                                                        [&](const capture::StepOutput& out) { timed_records.push_back(out.record); });
    CHECK(timed_records == records);
    CHECK(timed.kernels == as.kernels);
    CHECK(timed.outside_steps == as.outside_steps);
    CHECK(timed.steps_inferred == as.steps_inferred);
  }
  CHECK(reordered > 0);  // the slices moved events in some trace: the comparison means something
}

