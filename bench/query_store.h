// What the query benches share (bench_query, bench_query_vs_duckdb): key=value arguments,
// the median of repeated runs (wall and CPU time), and a generated, sealed store.
#pragma once

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "simulate/synthetic_steps.h"
#include "storage/store.h"

namespace argus::bench {

using Clock = std::chrono::steady_clock;

// key=value command-line arguments; anything else prints `usage` and exits 2.
class Args {
 public:
  Args(int argc, char** argv, const char* usage) {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      size_t eq = a.find('=');
      if (eq == std::string::npos) {
        std::fprintf(stderr, "usage: %s\n", usage);
        std::exit(2);
      }
      args_[a.substr(0, eq)] = a.substr(eq + 1);
    }
  }
  long num(const char* key, long def) const {
    auto it = args_.find(key);
    return it == args_.end() ? def : std::atol(it->second.c_str());
  }
  std::string str(const char* key, const std::string& def) const {
    auto it = args_.find(key);
    return it == args_.end() ? def : it->second;
  }

 private:
  std::map<std::string, std::string> args_;
};

// CPU seconds of this process, all threads (the queries run on one).
inline double cpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

struct Timing {
  double wall_s = 0;  // median over runs
  double cpu_s = 0;   // median over runs
  uint64_t values = 0;
  uint64_t rows = 0;
  uint64_t result_rows = 0;
  uint64_t chunks_read = 0;
  uint64_t chunks_skipped = 0;
};

// Runs fn(&timing) `runs` times; fn fills the counts, the medians of wall and CPU time are
// taken here.
template <typename Fn>
Timing timeRuns(int runs, Fn&& fn) {
  std::vector<double> wall, cpu;
  Timing t;
  for (int i = 0; i < runs; ++i) {
    auto w0 = Clock::now();
    double c0 = cpuSeconds();
    fn(&t);
    cpu.push_back(cpuSeconds() - c0);
    wall.push_back(std::chrono::duration<double>(Clock::now() - w0).count());
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  t.wall_s = wall[wall.size() / 2];
  t.cpu_s = cpu[cpu.size() / 2];
  return t;
}

struct GeneratedStore {
  int ranks = 256;
  int steps = 2000;
  // Steps before this one are stored without their kernels (the kernels table is the
  // largest; a bench that queries the last few steps' kernels need not pay for all).
  int kernels_from_step = 0;
  int threads = 1;  // ranks are generated and written in parallel (Store::write is thread-safe)
  simulate::SyntheticOptions gen = [] {
    simulate::SyntheticOptions o;
    o.signatures = 2;
    o.collectives = 1;
    o.stacks = 1;
    o.recompile_rate = 0;
    return o;
  }();
};

// Writes ranks x steps synthetic records of job `job` into a fresh store at `dir` through
// Store::write (head entries, 256 steps per request, as ingest would) and seals them into
// chunks. Prints the failure and exits 1 on a store error.
inline std::unique_ptr<storage::Store> buildStore(const std::string& dir, const std::string& job, const GeneratedStore& spec) {
  auto fail = [](const char* what, const Status& st) {
    std::fprintf(stderr, "%s: %s\n", what, st.toString().c_str());
    std::exit(1);
  };
  std::filesystem::remove_all(dir);
  storage::StoreOptions so;
  so.sync_wal = false;
  auto opened = storage::Store::open(dir, so);
  if (!opened.isOk()) fail(("open " + dir).c_str(), opened.status());
  std::unique_ptr<storage::Store> store = std::move(opened).value();
  auto job_id = store->ensureJob(job);
  if (!job_id.isOk()) fail("ensureJob", job_id.status());
  auto writeRanks = [&](int first, int stride) {
    for (int r = first; r < spec.ranks; r += stride) {
      simulate::SyntheticSteps gen(static_cast<uint32_t>(r), spec.gen);
      std::vector<model::StepRecord> recs;
      for (int s = 0; s < spec.steps; ++s) {
        recs.push_back(gen.next());
        if (s < spec.kernels_from_step) recs.back().kernels.clear();
        if (recs.size() == 256 || s + 1 == spec.steps) {
          storage::WriteRequest w;
          w.job = *job_id;
          w.records = recs;
          Status st = store->write(w);
          if (!st.isOk()) fail("write", st);
          recs.clear();
        }
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < spec.threads; ++t) threads.emplace_back(writeRanks, t, spec.threads);
  writeRanks(0, std::max(1, spec.threads));
  for (auto& t : threads) t.join();
  Status sealed = store->sealAll();
  if (!sealed.isOk()) fail("seal", sealed);
  return store;
}

}  // namespace argus::bench
