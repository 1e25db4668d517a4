// libargus_stacks_probe.so: the stack sampler inside a Python process, driven from Python
// through ctypes, for python_walk_test (each installed CPython) and bench/stack_sample.py.
// The sampler is the real one (StackSampler, hz 0: no thread of its own); each call runs
// sampling rounds on the calling thread, which Python released the GIL for (ctypes.CDLL).
//
//   int argus_stacks_probe(char* out, int cap)
//       one round; writes "sample <tid> <frame> | <frame> | ...\n" per sampled thread
//       (leaf first, from the stack dictionary the sampler produced) and returns the bytes
//       written, or -1 when they do not fit.
//   int argus_stacks_describe(char* out, int cap)    StackSampler::describe() and stats
//   double argus_stacks_bench(int rounds, int callgrind)
//       `rounds` rounds; returns the calling thread's CPU ns per round (what the sampler
//       thread spends, system calls included; wall time on a loaded machine says more about
//       the machine). callgrind != 0: instrumentation on around them only, one dump
//       labelled "stack-sample".
#include <time.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bench/callgrind_section.h"
#include "capture/stacks/stack_sampler.h"

namespace {

using argus::capture::stacks::StackSampler;
using argus::capture::stacks::StackSamplerOptions;

struct Probe {
  StackSampler sampler{[] {
    StackSamplerOptions o;
    o.hz = 0;
    return o;
  }()};
  std::map<uint64_t, std::vector<std::string>> stacks;
  std::string samples;

  void drain() {
    samples.clear();
    sampler.drain(
        [&](std::span<const argus::model::StackDictEntry> entries) {
          for (const auto& e : entries) stacks[e.stack_id] = e.frames;
        },
        [&](const argus::capture::TraceEvent& e) {
          samples += "sample " + std::to_string(e.thread);
          const auto it = stacks.find(e.id);
          if (it == stacks.end()) {
            samples += " <no dictionary entry>";
          } else {
            for (size_t i = 0; i < it->second.size(); ++i) samples += (i == 0 ? " " : " | ") + it->second[i];
          }
          samples += "\n";
        });
  }
};

Probe& probe() {
  static Probe p;
  return p;
}

int copyOut(const std::string& text, char* out, int cap) {
  if (cap < 0 || text.size() >= static_cast<size_t>(cap)) return -1;
  std::memcpy(out, text.data(), text.size());
  out[text.size()] = '\0';
  return static_cast<int>(text.size());
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int argus_stacks_probe(char* out, int cap) {
  Probe& p = probe();
  // The first round may only find the interpreter; rounds until one samples (bounded).
  for (int i = 0; i < 3 && p.sampler.sampleOnce() == 0; ++i) {
  }
  p.drain();
  return copyOut(p.samples, out, cap);
}

extern "C" __attribute__((visibility("default"))) int argus_stacks_describe(char* out, int cap) {
  Probe& p = probe();
  auto s = p.sampler.stats();
  std::string text = p.sampler.describe() + "\nticks " + std::to_string(s.ticks) + " samples " + std::to_string(s.samples) +
                     " stacks " + std::to_string(s.stacks) + " bad_frames " + std::to_string(s.bad_frames) + " bad_threads " +
                     std::to_string(s.bad_threads) + " memory_reads " + std::to_string(s.memory_reads) + " read_errors " + std::to_string(s.read_errors) + " off " + std::to_string(s.off) + "\n";
  return copyOut(text, out, cap);
}

extern "C" __attribute__((visibility("default"))) double argus_stacks_bench(int rounds, int callgrind) {
  Probe& p = probe();
  p.sampler.sampleOnce();  // finds the interpreter, warms the caches
  p.drain();
  timespec t0, t1;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
#if ARGUS_HAVE_CALLGRIND
  if (callgrind) CALLGRIND_START_INSTRUMENTATION;
#endif
  for (int i = 0; i < rounds; ++i) {
    p.sampler.sampleOnce();
    if ((i & 63) == 63) p.sampler.drain([](auto) {}, [](const auto&) {});  // keep the ring from filling
  }
#if ARGUS_HAVE_CALLGRIND
  if (callgrind) {
    CALLGRIND_STOP_INSTRUMENTATION;
    CALLGRIND_DUMP_STATS_AT("stack-sample");
  }
#endif
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
  double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + static_cast<double>(t1.tv_nsec - t0.tv_nsec);
  return rounds > 0 ? ns / rounds : 0;
}
