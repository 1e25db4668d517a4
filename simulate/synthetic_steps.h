// SyntheticSteps: realistic StepRecords for one rank, for tests and benchmarks.
//
// A rank runs a fixed set of kernel signatures (plausible CUDA names and launch
// geometry), each launched a nearly constant number of times per step (1..100) with
// log-normal durations around a per-signature mean (1 us .. 5 ms) and a few percent
// jitter; phase totals are consistent with the kernel sums; a handful of collectives
// (AllReduce, AllGather, ReduceScatter with bytes), sampled CPU stacks, and occasional
// events. Records come out canonical. Deterministic for a given (rank, options).
//
//   argus::simulate::SyntheticSteps gen(/*rank=*/3);
//   argus::model::StepRecord rec = gen.next();   // step 0, 1, 2, ...
//   const auto& dict = gen.dictionary();          // text behind the ids
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "model/step_record.h"

namespace argus::simulate {

struct SyntheticOptions {
  int signatures = 64;   // distinct kernel signatures per step (before recompiles add more)
  uint64_t seed = 1;     // same seed and rank -> same stream
  int collectives = 4;   // distinct (op, communicator, size class) entries per step
  int stacks = 8;        // distinct sampled CPU stacks
  uint64_t first_step = 0;
  int64_t start_ns = 1'700'000'000'000'000'000;  // epoch ns of the first step
  double jitter = 0.02;  // per-launch log-normal sigma (relative)
  // Chance per step that a JIT recompile adds a kernel signature for good (the rank then
  // runs signatures + recompiles kernels per step).
  double recompile_rate = 0.005;
};

struct SyntheticDictionary {
  std::vector<model::KernelDictEntry> kernels;
  std::vector<model::StackDictEntry> stacks;
  std::vector<model::StringDictEntry> strings;
};

class SyntheticSteps {
 public:
  explicit SyntheticSteps(uint32_t rank, SyntheticOptions options = {});
  SyntheticSteps(uint32_t rank, int signatures, uint64_t seed = 1, int collectives = 4, int stacks = 8);

  // Returns the record of the next step (canonical).
  model::StepRecord next();
  // The text behind every id the records use (kernels, stacks, event names).
  const SyntheticDictionary& dictionary() const { return dict_; }
  uint32_t rank() const { return rank_; }
  uint64_t nextStep() const { return step_; }

 private:
  struct Kernel {
    uint64_t signature;
    model::Phase phase;
    double mean_ns;
    double sigma;
    uint32_t launches;
  };
  struct Collective {
    model::CollectiveOp op;
    uint64_t communicator;
    uint64_t bytes;
    uint32_t count;
    double gbps;
    bool reports_wait;
  };

  uint32_t rank_;
  SyntheticOptions options_;
  std::mt19937_64 rng_;
  uint64_t step_;
  int64_t now_ns_;
  std::vector<Kernel> kernels_;
  std::vector<Collective> collectives_;
  std::vector<double> stack_weights_;
  SyntheticDictionary dict_;
};

}  // namespace argus::simulate
