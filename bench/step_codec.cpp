// bench_step_codec: bytes per StepRecord on the wire (keyframe vs delta vs delta+zstd) and
// encode/decode time per record, for synthetic ranks with 64 and 256 kernel signatures.
// Prints figures; asserts nothing. Usage: bench_step_codec [steps=2000]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "model/step_codec.h"
#include "tests/support/synthetic_steps.h"

using namespace argus::model;
using Clock = std::chrono::steady_clock;

namespace {

struct Figures {
  double bytes_per_record = 0;
  double encode_ns = 0;
  double decode_ns = 0;
};

Figures measure(const std::vector<StepRecord>& recs, StepCodecOptions opt) {
  Figures f;
  std::vector<std::string> encoded(recs.size());
  StepEncoder enc(opt);
  auto t0 = Clock::now();
  for (size_t i = 0; i < recs.size(); ++i) enc.encode(recs[i], &encoded[i]);
  auto t1 = Clock::now();
  StepDecoder dec;
  StepRecord out;
  size_t bytes = 0;
  for (size_t i = 0; i < recs.size(); ++i) {
    if (!dec.decode(encoded[i], &out).isOk() || !(out == recs[i])) {
      std::fprintf(stderr, "BUG: record %zu did not round-trip\n", i);
      std::exit(1);
    }
  }
  auto t2 = Clock::now();
  // Steady state: the first record (a keyframe in delta mode) is excluded from the size.
  for (size_t i = 1; i < encoded.size(); ++i) bytes += encoded[i].size();
  f.bytes_per_record = static_cast<double>(bytes) / static_cast<double>(encoded.size() - 1);
  f.encode_ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(recs.size());
  f.decode_ns = std::chrono::duration<double, std::nano>(t2 - t1).count() / static_cast<double>(recs.size());
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = argc > 1 ? std::atoi(argv[1]) : 2000;
  if (steps < 2) steps = 2;
  std::printf("bench_step_codec: %d synthetic steps per rank, sizes exclude the first record\n\n", steps);
  std::printf("%-5s %-9s %-15s %11s %9s %11s %11s\n", "sigs", "launches", "mode", "bytes/rec", "vs key", "encode ns", "decode ns");
  for (int sigs : {64, 256}) {
    argus::testing::SyntheticSteps gen(0, sigs, 1);
    std::vector<StepRecord> recs;
    recs.reserve(static_cast<size_t>(steps));
    uint64_t launches = 0;
    for (int i = 0; i < steps; ++i) {
      recs.push_back(gen.next());
      for (const auto& k : recs.back().kernels) launches += k.count;
    }
    double per_step = static_cast<double>(launches) / steps;
    struct Mode {
      const char* name;
      StepCodecOptions opt;
    } modes[] = {{"keyframe", {.delta = false, .zstd = false}},
                 {"keyframe+zstd", {.delta = false, .zstd = true}},
                 {"delta", {.delta = true, .zstd = false}},
                 {"delta+zstd", {.delta = true, .zstd = true}}};
    double key_bytes = 0;
    for (const Mode& m : modes) {
      Figures f = measure(recs, m.opt);
      if (key_bytes == 0) key_bytes = f.bytes_per_record;
      std::printf("%-5d %-9.0f %-15s %11.1f %8.2fx %11.0f %11.0f\n", sigs, per_step, m.name, f.bytes_per_record, key_bytes / f.bytes_per_record,
                  f.encode_ns, f.decode_ns);
    }
  }
  return 0;
}
