// Fuzzes storage::decodeInts (every integer codec, with and without zstd and context).
//
// Input: parameters, then the payload:
//   u8  codec byte (CodecId | kCodecZstdFlag)
//   u16 rows (taken modulo 4097)
//   u8  context flags (codec_context.h: groups, counts, histograms, predictions, none)
//   u8  group count - 1; u8 group run length - 1
// The context is synthesized from these so that the payload bytes carry the mutations.
// Invariants: an accepted payload decodes to exactly `rows` values; the values re-encode
// (the analysis pass, and the codec the input named when it applies) and decode back.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "storage/column_codec.h"
#include "tests/fuzz/codec_context.h"
#include "tests/fuzz/fuzz_util.h"

using namespace argus::storage;
using argus::model::DurationHistogram;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const argus::fuzz::CodecFuzzCase in(argus::fuzz::ParamReader(argus::fuzz::asView(data, size)), 4096);
  const uint8_t codec = in.codec;
  const size_t rows = in.rows;
  const std::string_view payload = in.payload;
  const RowContext* ctx_ptr = in.synth.get();

  std::vector<int64_t> values = {42, -1};  // stale contents the decoder must replace
  if (!decodeInts(codec, payload, rows, ctx_ptr, &values).isOk()) return 0;
  FUZZ_CHECK(values.size() == rows);
  (void)codecName(codec);

  EncodedPayload p = encodeInts(values, ctx_ptr);
  std::vector<int64_t> back;
  FUZZ_CHECK(decodeInts(p.codec, p.bytes, rows, ctx_ptr, &back).isOk());
  FUZZ_CHECK(back == values);

  std::string same_codec;
  auto id = static_cast<CodecId>(codec & kCodecIdMask);
  if (encodeIntsWith(id, values, ctx_ptr, &same_codec)) {
    back.clear();
    FUZZ_CHECK(decodeInts(static_cast<uint8_t>(id), same_codec, rows, ctx_ptr, &back).isOk());
    FUZZ_CHECK(back == values);
  }
  return 0;
}
