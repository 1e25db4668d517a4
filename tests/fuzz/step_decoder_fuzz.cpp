// Fuzzes model::StepDecoder (delta chains) and model::decodeStandalone.
//
// Input: the encodings of a session's records joined by fuzz::kSeparator. They go through
// one StepDecoder in order (a delta needs the records before it), and each also through
// decodeStandalone. Invariants checked:
//   - decoding into a reused record equals decoding into a fresh one (capacity reuse must
//     not leak old contents);
//   - a standalone-decoded canonical record re-encodes and decodes to itself;
//   - a decoded stream of canonical records re-encodes (delta, with and without zstd)
//     and decodes, through fresh coders, to the same records.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/step_codec.h"
#include "tests/fuzz/fuzz_util.h"

using argus::model::StepRecord;

namespace {

bool isCanonical(const StepRecord& rec) {
  StepRecord copy = rec;
  copy.canonicalize();
  return copy == rec;
}

void checkStreamRoundTrip(const std::vector<StepRecord>& records, bool zstd) {
  argus::model::StepEncoder enc({.delta = true, .zstd = zstd});
  argus::model::StepDecoder dec;
  StepRecord back;
  std::string bytes;
  for (const StepRecord& rec : records) {
    bytes.clear();
    enc.encode(rec, &bytes);
    FUZZ_CHECK(dec.decode(bytes, &back).isOk());
    FUZZ_CHECK(back == rec);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto pieces = argus::fuzz::splitPieces(argus::fuzz::asView(data, size), 32);

  argus::model::StepDecoder decoder;
  StepRecord reused;  // keeps the capacity (and stale contents) of earlier decodes
  std::vector<StepRecord> stream;
  bool stream_canonical = true;
  for (std::string_view piece : pieces) {
    if (decoder.decode(piece, &reused).isOk()) {
      stream.push_back(reused);
      stream_canonical = stream_canonical && isCanonical(reused);
    }

    StepRecord fresh;
    argus::Status s = argus::model::decodeStandalone(piece, &fresh);
    StepRecord again = reused;  // non-empty, to catch fields a decode forgets to overwrite
    argus::Status s2 = argus::model::decodeStandalone(piece, &again);
    FUZZ_CHECK(s.isOk() == s2.isOk());
    if (!s.isOk()) continue;
    FUZZ_CHECK(fresh == again);
    if (isCanonical(fresh)) {
      std::string bytes = argus::model::encodeStandalone(fresh);
      StepRecord back;
      FUZZ_CHECK(argus::model::decodeStandalone(bytes, &back).isOk());
      FUZZ_CHECK(back == fresh);
    }
  }
  if (!stream.empty() && stream_canonical) {
    checkStreamRoundTrip(stream, false);
    checkStreamRoundTrip(stream, true);
  }
  return 0;
}
