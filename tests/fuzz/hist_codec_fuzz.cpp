// Fuzzes storage::decodeHists (kHistSparse, kHistSparseGrouped, kHistWindow; zstd or not).
//
// Input: parameters, then the payload:
//   u8  codec byte (CodecId | kCodecZstdFlag)
//   u16 rows (taken modulo 2049)
//   u8  context flags (codec_context.h: groups, counts, no RowContext)
//   u8  group count - 1; u8 group run length - 1
// Invariants: an accepted payload decodes to `rows` valid histograms, matching the count
// column when the codec implied counts from it; they re-encode (with the counts they
// really hold) and decode back.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "storage/chunk_format.h"
#include "storage/hist_codec.h"
#include "tests/fuzz/codec_context.h"
#include "tests/fuzz/fuzz_util.h"

using namespace argus::storage;
using argus::model::DurationHistogram;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const argus::fuzz::CodecFuzzCase in(argus::fuzz::ParamReader(argus::fuzz::asView(data, size)), 2048);
  const uint8_t codec = in.codec;
  const size_t rows = in.rows;
  const std::string_view payload = in.payload;
  const RowContext* ctx_ptr = in.synth.get();

  HistColumn hists;
  hists.resize(3);
  hists[0].add(5, 2);  // stale contents the decoder must replace
  hists.clear();       // and spare ones it reuses
  if (!decodeHists(codec, payload, rows, ctx_ptr, &hists).isOk()) return 0;
  FUZZ_CHECK(hists.size() == rows);
  for (const DurationHistogram& h : hists) FUZZ_CHECK(DurationHistogram::isValid(h.buckets()));
  // The codec read the count column when the chunk's context says so (hist-window's flags).
  ChunkView view;
  view.codec = codec;
  view.payload = payload;
  if (contextOf(view).counts) {
    for (size_t i = 0; i < rows; ++i) FUZZ_CHECK(hists[i].count() == static_cast<uint64_t>(in.synth.counts[i]));
  }

  // Re-encode against the counts the histograms really hold (the count column of a real
  // block agrees with them; the encoder checks that before it implies a count).
  RowContext ctx2;
  ctx2.ids = in.synth.ctx.ids;
  ctx2.count = in.synth.ctx.count;
  std::vector<int64_t> real_counts;
  for (const DurationHistogram& h : hists) real_counts.push_back(static_cast<int64_t>(h.count()));
  ctx2.counts = real_counts;
  const RowContext* ctx2_ptr = ctx_ptr ? &ctx2 : nullptr;

  EncodedPayload p = encodeHists(hists, ctx2_ptr);
  HistColumn back;
  FUZZ_CHECK(decodeHists(p.codec, p.bytes, rows, ctx2_ptr, &back).isOk());
  FUZZ_CHECK(back == hists);

  std::string same_codec;
  auto id = static_cast<CodecId>(codec & kCodecIdMask);
  if (encodeHistsWith(id, hists, ctx2_ptr, &same_codec)) {
    back.clear();
    FUZZ_CHECK(decodeHists(static_cast<uint8_t>(id), same_codec, rows, ctx2_ptr, &back).isOk());
    FUZZ_CHECK(back == hists);
  }
  return 0;
}
