// The stack sampler over live interpreters: walk_probe.py runs under every CPython 3.10-3.13
// found at configure time (ARGUS_TEST_PYTHONS) and samples itself through
// libargus_stacks_probe.so; the stacks must name exactly the functions on the main thread's
// call chain (qualified name, file, first line, leaf first), the sleeping thread's function,
// both threads' OS tids, and a native leaf. Each interpreter is its own subcase; with none
// found the test says so and checks nothing.
#include <doctest/doctest.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct ProbeRun {
  int status = -1;
  std::string output;
};

ProbeRun runProbe(const std::string& python, const std::string& mode = "") {
  std::string cmd = std::string(ARGUS_TEST_PRELOAD) + " " + python + " " + ARGUS_WALK_PROBE_SCRIPT + " " + ARGUS_STACKS_PROBE_LIBRARY + " " + mode + " 2>&1";
  ProbeRun r;
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  r.status = ::pclose(p);
  return r;
}

std::vector<std::string> split(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at - start));
    if (at == std::string::npos) return out;
    start = at + sep.size();
  }
}

std::vector<std::string> pythons() {
  std::vector<std::string> out;
  for (const std::string& p : split(ARGUS_TEST_PYTHONS, ":")) {
    if (!p.empty()) out.push_back(p);
  }
  return out;
}

}  // namespace

TEST_CASE("stack sampler: every installed CPython's stacks name the live call chain") {
  const std::vector<std::string> found = pythons();
  if (found.empty()) {
    MESSAGE("no CPython 3.10-3.13 found at configure time: nothing to check");
    return;
  }
  for (const std::string& python : found) {
    SUBCASE(python.c_str()) {
      ProbeRun run = runProbe(python);
      INFO(python << " output:\n" << run.output);
      REQUIRE(run.status == 0);
      std::map<std::string, uint32_t> tid;
      std::map<std::string, std::vector<std::string>> expect;
      std::vector<std::pair<uint32_t, std::vector<std::string>>> samples;  // tid, frames leaf first
      std::istringstream in(run.output);
      std::string line;
      while (std::getline(in, line)) {
        if (line.rfind("tid ", 0) == 0) {
          std::istringstream f(line.substr(4));
          std::string who;
          f >> who >> tid[who];
        } else if (line.rfind("expect ", 0) == 0) {
          size_t sp = line.find(' ', 7);
          expect[line.substr(7, sp - 7)].push_back(line.substr(sp + 1));
        } else if (line.rfind("sample ", 0) == 0) {
          size_t sp = line.find(' ', 7);
          uint32_t t = static_cast<uint32_t>(std::stoul(line.substr(7, sp - 7)));
          samples.push_back({t, split(line.substr(sp + 1), " | ")});
        }
      }
      REQUIRE(tid.count("main") == 1);
      REQUIRE(tid.count("worker") == 1);
      REQUIRE(expect["main"].size() == 5);
      REQUIRE(expect["worker"].size() == 1);
      CHECK(run.output.find("describe CPython ") != std::string::npos);

      int main_samples = 0, worker_samples = 0, worker_asleep = 0;
      for (const auto& [t, frames] : samples) {
        REQUIRE(!frames.empty());
        const std::string& leaf = frames[0];
        CHECK_MESSAGE(leaf.size() > 2, leaf);
        CHECK_MESSAGE((leaf.front() == '[' && leaf.back() == ']'), leaf);  // the native leaf comes first
        if (t == tid["main"]) {
          ++main_samples;
          // The probe samples from the main thread itself: at that moment it is reading its
          // own syscall file.
          CHECK(leaf == "[pread64]");
          std::vector<std::string> python_frames(frames.begin() + 1, frames.end());
          CHECK(python_frames == expect["main"]);
        } else if (t == tid["worker"]) {
          ++worker_samples;
          REQUIRE(frames.size() >= 2);
          CHECK(frames[1] == expect["worker"][0]);
          // threading's own frames (Thread.run, _bootstrap_inner, _bootstrap) lie below it.
          CHECK(frames.size() >= 4);
          if (leaf == "[clock_nanosleep]" || leaf == "[nanosleep]" || leaf == "[select]" || leaf == "[pselect6]") ++worker_asleep;
        } else {
          FAIL("a sample of a thread the program did not start: tid " << t);
        }
      }
      CHECK(main_samples == 5);
      CHECK(worker_samples == 5);
      // The worker sleeps 20 ms at a time: at least one of the five rounds finds it asleep.
      CHECK(worker_asleep >= 1);
    }
  }
}

TEST_CASE("stack sampler: threads starting and ending under it, and a stack past the depth bound") {
  const std::vector<std::string> found = pythons();
  if (found.empty()) {
    MESSAGE("no CPython 3.10-3.13 found at configure time: nothing to check");
    return;
  }
  for (const std::string& python : found) {
    SUBCASE(python.c_str()) {
      // Thread states are created and freed while the sampler reads them: reads of freed
      // memory are errors or stale values, never a crash; every round completes.
      ProbeRun run = runProbe(python, "churn");
      INFO(python << " output:\n" << run.output);
      REQUIRE(run.status == 0);
      size_t at = run.output.find("churn rounds ");
      REQUIRE(at != std::string::npos);
      std::istringstream in(run.output.substr(at));
      std::string w1, w2, w3, w4, w5;
      int rounds = 0, samples = 0, deep = 0, deep_ok = 0;
      in >> w1 >> w2 >> rounds >> w3 >> samples >> w4 >> deep >> w5 >> deep_ok;
      CHECK(rounds == 200);
      // Every round samples main and the deep thread; the spawner (and short-lived threads,
      // when caught) in most: a walk that races a thread state being freed is dropped.
      CHECK(samples >= 2 * rounds + rounds / 2);
      CHECK(deep == 200);
      CHECK(deep_ok == deep);
    }
  }
}
