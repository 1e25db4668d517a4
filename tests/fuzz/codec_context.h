// The RowContext that column_codec_fuzz and hist_codec_fuzz synthesize from a few
// parameter bytes (so the payload carries the mutations), shared with the seed writer.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "model/duration_histogram.h"
#include "storage/column_codec.h"
#include "tests/fuzz/fuzz_util.h"

namespace argus::fuzz {

enum ContextFlag : uint8_t {
  kCtxGroups = 1,       // ids: row i in group (i / run) % group_count, renumbered densely
  kCtxCounts = 2,       // counts: row i holds i % 97 launches
  kCtxHists = 4,        // hists: row i holds i % 97 launches of 1000 * (i % 13 + 1) ns
  kCtxPrediction = 8,   // prediction: row i predicts i * 1000003
  kCtxNone = 16,        // no RowContext at all (null pointer)
};

struct SynthContext {
  storage::RowContext ctx;
  std::vector<int64_t> counts, prediction;
  std::vector<model::DurationHistogram> hists;
  bool none = false;

  SynthContext(size_t rows, uint8_t flags, uint32_t group_count, uint32_t run) {
    none = flags & kCtxNone;
    if (flags & kCtxGroups) {
      // Dense ids in order of first appearance, as RowContext requires.
      uint32_t seen = 0;
      for (size_t i = 0; i < rows; ++i) {
        uint32_t id = static_cast<uint32_t>((i / run) % group_count);
        if (id >= seen) {
          id = seen;
          seen = std::min(seen + 1, group_count);
        }
        ctx.ids.push_back(id);
      }
      ctx.count = seen;
    }
    if (flags & (kCtxCounts | kCtxHists)) {
      for (size_t i = 0; i < rows; ++i) counts.push_back(static_cast<int64_t>(i % 97));
    }
    if (flags & kCtxCounts) ctx.counts = counts;
    if (flags & kCtxHists) {
      hists.resize(rows);
      for (size_t i = 0; i < rows; ++i) {
        if (counts[i] > 0) hists[i].add(static_cast<int64_t>(1000 * (i % 13 + 1)), static_cast<uint32_t>(counts[i]));
      }
      ctx.hists = hists;
    }
    if (flags & kCtxPrediction) {
      for (size_t i = 0; i < rows; ++i) prediction.push_back(static_cast<int64_t>(i) * 1'000'003);
      ctx.prediction = prediction;
    }
  }
  SynthContext(const SynthContext&) = delete;
  SynthContext& operator=(const SynthContext&) = delete;

  const storage::RowContext* get() const { return none ? nullptr : &ctx; }
};

// Input header of the codec targets: codec byte, u16 rows, flags, group count - 1, run - 1.
inline constexpr size_t kCodecHeaderBytes = 6;

// A codec target's input: the header read, the payload after it, and the context the
// header's parameters synthesize. Rows are taken modulo max_rows + 1.
struct CodecFuzzCase {
  CodecFuzzCase(ParamReader in, size_t max_rows)
      : codec(in.u8()),
        rows(in.u16() % (max_rows + 1)),
        flags(in.u8()),
        group_count(in.u8() + 1u),
        run(in.u8() + 1u),
        payload(in.rest()),
        synth(rows, flags, group_count, run) {}

  const uint8_t codec;
  const size_t rows;
  const uint8_t flags;
  const uint32_t group_count, run;
  const std::string_view payload;
  const SynthContext synth;
};

}  // namespace argus::fuzz
