// Real NVTX injection on the CPU: nvtx_test_program (C, the toolkit's nvtx3 headers, no
// Argus code) runs with NVTX_INJECTION64_PATH naming the test injection library, which
// records through capture/nvtx and writes the drained events at exit. We check the events,
// then feed them to a StepAssembler to see the steps and phases it recognizes.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "capture/name_table.h"
#include "capture/step_assembler.h"
#include "capture/trace_event.h"

using namespace argus::capture;

namespace {

struct Event {
  std::string type;
  uint32_t thread = 0;
  int64_t start = 0, end = 0;
  uint64_t id = 0;
  std::string name;
};

struct Run {
  int status = -1;
  std::map<std::string, long> out;  // the program's stdout: "main <tid>", ...
  std::vector<Event> events;
  std::map<uint32_t, std::string> threads;
  std::map<std::string, uint64_t> stats;
  bool wrote = false;
};

Run runProgram(bool inject) {
  Run run;
  std::string dir = std::filesystem::temp_directory_path() / ("argus_nvtx_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string events = dir + "/events.txt", stdout_path = dir + "/stdout.txt";
  std::filesystem::remove(events);
  std::string cmd = "env -u NVTX_INJECTION64_PATH ARGUS_NVTX_TEST_OUT=" + events + " ";
  if (inject) cmd += std::string("NVTX_INJECTION64_PATH=") + ARGUS_NVTX_TEST_LIBRARY + " ";
  cmd += std::string(ARGUS_NVTX_TEST_PROGRAM) + " > " + stdout_path;
  run.status = std::system(cmd.c_str());
  std::ifstream so(stdout_path);
  for (std::string key; so >> key;) so >> run.out[key];
  std::ifstream in(events);
  run.wrote = in.good();
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::string kind;
    ls >> kind;
    if (kind == "event") {
      Event e;
      ls >> e.type >> e.thread >> e.start >> e.end >> e.id;
      ls.get();  // the space before the name (which may contain spaces)
      std::getline(ls, e.name);
      run.events.push_back(e);
    } else if (kind == "thread") {
      uint32_t tid = 0;
      std::string name;
      ls >> tid >> name;
      run.threads[tid] = name;
    } else if (kind == "stat") {
      std::string key;
      ls >> key >> run.stats[key];
    }
  }
  std::filesystem::remove_all(dir);
  return run;
}

std::vector<Event> named(const Run& run, const std::string& type, const std::string& name) {
  std::vector<Event> out;
  for (const Event& e : run.events) {
    if (e.type == type && e.name == name) out.push_back(e);
  }
  return out;
}

}  // namespace

TEST_CASE("without NVTX_INJECTION64_PATH the program runs and nothing is collected") {
  Run run = runProgram(false);
  CHECK(run.status == 0);
  CHECK_FALSE(run.wrote);
  CHECK(run.out["main"] > 0);
}

TEST_CASE("real NVTX injection: ranges, marks, domains, registered and wide strings, payloads, threads") {
  Run run = runProgram(true);
  REQUIRE(run.status == 0);
  REQUIRE(run.wrote);
  uint32_t main_tid = static_cast<uint32_t>(run.out["main"]), worker_tid = static_cast<uint32_t>(run.out["worker"]);
  REQUIRE(main_tid != 0);
  REQUIRE(worker_tid != 0);
  CHECK(main_tid != worker_tid);
  CHECK(run.out["unmatched"] < 0);  // NVTX's answer for a pop with nothing open

  // Steps: domain "argus" + "step" + uint64 payload -> "argus:step#N", one complete range each.
  for (int step = 10; step < 13; ++step) {
    auto s = named(run, "range", "argus:step#" + std::to_string(step));
    REQUIRE(s.size() == 1);
    CHECK(s[0].thread == main_tid);
    CHECK(s[0].id == static_cast<uint64_t>(step));
    CHECK(s[0].end > s[0].start);
  }
  // Default-domain pushes: begin / end pairs on the main thread, ASCII and wide names.
  CHECK(named(run, "begin", "forward").size() == 3);
  CHECK(named(run, "begin", "backward \xC3\xBC\xE4\xB8\xAD").size() == 3);
  // A string registered in domain "argus": "argus:optimizer" ranges inside each step.
  auto opt = named(run, "range", "argus:optimizer");
  REQUIRE(opt.size() == 3);
  auto steps10 = named(run, "range", "argus:step#10");
  CHECK(opt[0].start >= steps10[0].start);
  CHECK(opt[0].end <= steps10[0].end);

  CHECK(named(run, "mark", "checkpoint").size() == 1);
  CHECK(named(run, "mark", "NCCL:AllReduce").size() == 1);
  // Started on main, ended on the worker: one range on the starting thread.
  auto load = named(run, "range", "data_load");
  REQUIRE(load.size() == 1);
  CHECK(load[0].thread == main_tid);
  auto wr = named(run, "begin", "worker-range");
  REQUIRE(wr.size() == 1);
  CHECK(wr[0].thread == worker_tid);
  CHECK(load[0].end >= wr[0].start);
  CHECK(run.threads[worker_tid] == "worker");
  // Crossed domains: "outer" is a begin/end pair, the NCCL push a complete range of its own.
  REQUIRE(named(run, "begin", "outer").size() == 1);
  REQUIRE(named(run, "range", "NCCL:AllReduce").size() == 1);

  // Every default-domain begin has its end on the same thread, in order.
  std::map<uint32_t, int> depth;
  int64_t last = INT64_MIN;
  for (const Event& e : run.events) {
    if (e.type == "begin") ++depth[e.thread];
    if (e.type == "end") CHECK(--depth[e.thread] >= 0);
    int64_t key = e.type == "range" ? e.end : e.start;  // the drain orders by the completing call
    CHECK(key >= last);
    last = key;
  }
  for (const auto& [thread, d] : depth) CHECK(d == 0);
  CHECK(run.stats["dropped"] == 0);
  CHECK(run.stats["unknown_names"] == 0);
  CHECK(run.stats["unmatched_pops"] == 1);

  // What the step assembler makes of it: three marker steps numbered by the payloads.
  NameTable names;
  std::vector<TraceEvent> stream;
  for (const Event& e : run.events) {
    TraceEvent t;
    t.type = e.type == "begin"   ? EventType::kRangeBegin
             : e.type == "end"   ? EventType::kRangeEnd
             : e.type == "range" ? EventType::kRange
                                 : EventType::kMark;
    t.start_ns = e.start;
    t.end_ns = e.end;
    t.thread = e.thread;
    t.name = names.intern(e.name);
    stream.push_back(t);
  }
  StepAssemblerOptions opt_a;
  opt_a.infer_steps = false;
  std::vector<uint64_t> steps;
  std::vector<int64_t> iter;
  StepAssembler a(names, opt_a, [&](const StepOutput& o) {
    steps.push_back(o.record.step);
    iter.push_back(o.record.end_ns - o.record.start_ns);
  });
  for (const TraceEvent& t : stream) a.onEvent(t);
  a.flush();
  CHECK(steps == std::vector<uint64_t>{10, 11, 12});
  REQUIRE(iter.size() == 3);
  CHECK(iter[0] == steps10[0].end - steps10[0].start);  // the step is the marker range, to the ns
  CHECK(a.stats().unmatched_range_ends == 0);
  CHECK(a.stats().bad_step_markers == 0);
}
