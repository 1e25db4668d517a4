// bench_step_codec: bytes per StepRecord on the wire (keyframe vs delta vs delta+zstd) and
// encode/decode time per record, for synthetic ranks with 64 and 256 kernel signatures,
// plus argusd's ingest path (delta decode of the session stream, the bytes copied into a
// head entry) in ns/record and records/s per core.
// Times are the best of several passes (the machine is shared; the minimum is the least
// disturbed figure); correctness is checked outside the timed loops. Encoders are timed
// on records hot in cache (see hotEncodeNs); decoders read encodings written beforehand
// into a reused record.
// Prints figures; asserts nothing. Usage: bench_step_codec [steps=2000] [passes=5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "model/step_codec.h"
#include "storage/head_entry.h"
#include "simulate/synthetic_steps.h"

using namespace argus::model;
using Clock = std::chrono::steady_clock;

namespace {

int g_passes = 5;

// Runs `pass` g_passes times; returns the best time per record in ns.
template <typename F>
double bestNsPerRecord(size_t records, F&& pass) {
  double best = 1e300;
  for (int p = 0; p < g_passes; ++p) {
    auto t0 = Clock::now();
    pass();
    auto t1 = Clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(records));
  }
  return best;
}

[[noreturn]] void bug(const char* what, size_t i) {
  std::fprintf(stderr, "BUG: %s: record %zu did not round-trip\n", what, i);
  std::exit(1);
}

struct Figures {
  double bytes_per_record = 0;
  double encode_ns = 0;
  double decode_ns = 0;
};

// Encoders run on records that are hot in cache, as in capture (the record was just
// built) and ingest (it was just decoded): each input is copied into a reused record
// outside the timed region, and each encode is timed alone. Timer overhead (~2 clock
// reads per record) is included.
template <typename Encode>
double hotEncodeNs(const std::vector<StepRecord>& recs, Encode&& encode) {
  StepRecord hot;
  double best = 1e300;
  for (int p = 0; p < g_passes; ++p) {
    std::chrono::nanoseconds total{0};
    for (size_t i = 0; i < recs.size(); ++i) {
      hot = recs[i];
      auto t0 = Clock::now();
      encode(i, hot);
      total += Clock::now() - t0;
    }
    best = std::min(best, static_cast<double>(total.count()) / static_cast<double>(recs.size()));
  }
  return best;
}

Figures measure(const std::vector<StepRecord>& recs, StepCodecOptions opt) {
  Figures f;
  std::vector<std::string> encoded(recs.size());
  // Output buffers keep their capacity across passes, as a sender's batch buffer does.
  StepEncoder enc(opt);
  f.encode_ns = hotEncodeNs(recs, [&](size_t i, const StepRecord& rec) {
    if (i == 0) enc = StepEncoder(opt);  // each pass starts a session
    encoded[i].clear();
    enc.encode(rec, &encoded[i]);
  });
  StepRecord out;
  f.decode_ns = bestNsPerRecord(recs.size(), [&] {
    StepDecoder dec;
    for (size_t i = 0; i < recs.size(); ++i) {
      if (!dec.decode(encoded[i], &out).isOk()) bug("decode", i);
    }
  });
  StepDecoder dec;
  for (size_t i = 0; i < recs.size(); ++i) {
    if (!dec.decode(encoded[i], &out).isOk() || !(out == recs[i])) bug("decode", i);
  }
  // Steady state: the first record (a keyframe in delta mode) is excluded from the size.
  size_t bytes = 0;
  for (size_t i = 1; i < encoded.size(); ++i) bytes += encoded[i].size();
  f.bytes_per_record = static_cast<double>(bytes) / static_cast<double>(encoded.size() - 1);
  return f;
}

struct Standalone {
  double encode_ns = 0;  // encodeStandalone(rec)
  double decode_ns = 0;  // decodeStandalone(bytes, &reused)
};

Standalone measureStandalone(const std::vector<StepRecord>& recs) {
  Standalone s;
  std::vector<std::string> encoded(recs.size());
  s.encode_ns = hotEncodeNs(recs, [&](size_t i, const StepRecord& rec) { encoded[i] = encodeStandalone(rec); });
  StepRecord out;
  s.decode_ns = bestNsPerRecord(recs.size(), [&] {
    for (size_t i = 0; i < recs.size(); ++i) {
      if (!decodeStandalone(encoded[i], &out).isOk()) bug("decodeStandalone", i);
    }
  });
  for (size_t i = 0; i < recs.size(); ++i) {
    if (!decodeStandalone(encoded[i], &out).isOk() || !(out == recs[i])) bug("decodeStandalone", i);
  }
  return s;
}

struct IngestFigures {
  double ns = 0;           // the whole path, per record
  double light_ns = 0;     // of it: writing the record's light rows
  double light_bytes = 0;  // what they add to the entry, per record
};

// argusd's ingest path: decode the session's delta stream into a reused record (validation)
// and copy each record's bytes as they arrived, with its light rows, into a head-entry arena
// (storage/head_entry.h).
IngestFigures measureIngest(const std::vector<StepRecord>& recs) {
  std::vector<std::string> wire(recs.size());
  StepEncoder enc;
  for (size_t i = 0; i < recs.size(); ++i) enc.encode(recs[i], &wire[i]);
  StepRecord rec;
  std::string arena;
  IngestFigures f;
  f.ns = bestNsPerRecord(recs.size(), [&] {
    StepDecoder dec;
    arena.clear();
    argus::storage::beginHeadEntry(&arena);
    for (size_t i = 0; i < recs.size(); ++i) {
      if (!dec.decode(wire[i], &rec).isOk()) bug("ingest decode", i);
      argus::storage::appendHeadRecord(&arena, wire[i], rec);
    }
  });
  if (arena.size() < recs.size()) bug("ingest arena", 0);
  f.light_ns = bestNsPerRecord(recs.size(), [&] {
    arena.clear();
    for (const StepRecord& r : recs) argus::storage::putLightPart(r, &arena);
  });
  f.light_bytes = static_cast<double>(arena.size()) / static_cast<double>(recs.size());
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = argc > 1 ? std::atoi(argv[1]) : 2000;
  if (steps < 2) steps = 2;
  if (argc > 2) g_passes = std::max(1, std::atoi(argv[2]));
  std::printf("bench_step_codec: %d synthetic steps per rank, best of %d passes, sizes exclude the first record\n\n", steps, g_passes);
  std::printf("%-5s %-9s %-24s %11s %9s %11s %11s\n", "sigs", "launches", "mode", "bytes/rec", "vs key", "encode ns", "decode ns");
  struct Ingest {
    int sigs;
    double per_step;
    Standalone standalone;
    IngestFigures figures;
  };
  std::vector<Ingest> ingest;
  for (int sigs : {64, 256}) {
    argus::simulate::SyntheticSteps gen(0, sigs, 1);
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
      std::printf("%-5d %-9.0f %-24s %11.1f %8.2fx %11.0f %11.0f\n", sigs, per_step, m.name, f.bytes_per_record, key_bytes / f.bytes_per_record,
                  f.encode_ns, f.decode_ns);
    }
    Standalone st = measureStandalone(recs);
    std::printf("%-5d %-9.0f %-24s %11s %9s %11.0f %11.0f\n", sigs, per_step, "encode/decodeStandalone", "", "", st.encode_ns, st.decode_ns);
    ingest.push_back(Ingest{sigs, per_step, st, measureIngest(recs)});
  }
  std::printf("\ningest path (delta decode into a reused record + the bytes copied into a head entry with its light rows), one core:\n");
  std::printf("%-5s %-9s %-24s %11s %14s %15s %14s\n", "sigs", "launches", "path", "ns/record", "records/s/core", "light rows ns", "light B/rec");
  for (const Ingest& i : ingest) {
    const IngestFigures& f = i.figures;
    std::printf("%-5d %-9.0f %-24s %11.0f %14.0f %8.0f (%3.1f%%) %14.1f\n", i.sigs, i.per_step, "decode+head entry", f.ns, 1e9 / f.ns, f.light_ns,
                100 * f.light_ns / f.ns, f.light_bytes);
  }
  return 0;
}
