// The decoder's per-record decoded-size budget (docs/wire/step-record.md, "Decoded-size
// budget"): a delta record repeating the previous lists and histograms must not decode to
// thousands of times its size.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "model/step_codec.h"
#include "simulate/synthetic_steps.h"

using namespace argus::model;
using argus::Status;

namespace {

// K kernels, each with a histogram spanning every bucket (the reviewer's amplification record).
StepRecord wideRecord(int kernels) {
  StepRecord r;
  r.rank = 0;
  r.step = 1;
  r.start_ns = 1;
  r.end_ns = 2;
  r.iter_ns = 1;
  for (int k = 0; k < kernels; ++k) {
    KernelStat s;
    s.signature = 1000 + static_cast<uint64_t>(k);
    s.phase = Phase::kForward;
    for (int64_t d = 1; d > 0 && d < (int64_t{1} << 62); d = d + d / 64 + 1) s.hist.add(d, 1);
    s.count = static_cast<uint32_t>(s.hist.count());
    s.total_ns = 12345;
    r.kernels.push_back(std::move(s));
  }
  r.canonicalize();
  return r;
}

}  // namespace

TEST_CASE("decodedUnitBudget: 64 units per byte, floor and cap") {
  CHECK(decodedUnitBudget(0) == kDecodedUnitsFloor);
  CHECK(decodedUnitBudget(100) == kDecodedUnitsFloor);
  CHECK(decodedUnitBudget(4096) == 4096 * kDecodedUnitsPerByte);
  CHECK(decodedUnitBudget(size_t{1} << 40) == kMaxDecodedUnits);
}

TEST_CASE("a 'same kernels, same histograms' delta record over the budget is Corruption naming the field") {
  StepRecord r = wideRecord(200);
  StepEncoder enc({.zstd = false});
  std::string key, delta;
  enc.encode(r, &key);
  r.step = 2;
  enc.encode(r, &delta);
  REQUIRE(decodedUnits(r) > decodedUnitBudget(delta.size()));  // 200 x ~2000 buckets from a few hundred bytes

  StepDecoder dec;
  StepRecord out;
  Status s = dec.decode(key, &out);  // the keyframe pays for its buckets in bytes
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  CHECK(decodedUnits(out) == decodedUnits(r));
  s = dec.decode(delta, &out);
  CHECK(s.code() == Status::Code::kCorruption);
  CHECK_MESSAGE(s.message().find("kernel histogram (same as previous): decoded size over budget") != std::string::npos, s.message());
  CHECK_MESSAGE(s.message().find(std::to_string(delta.size()) + "-byte record") != std::string::npos, s.message());
}

TEST_CASE("a keyframe that zstd shrinks far below its buckets decodes: the budget counts its decompressed body") {
  StepRecord r = wideRecord(200);  // regular buckets: zstd takes the body to under 1 KB
  StepEncoder enc;
  std::string key;
  enc.encode(r, &key);
  REQUIRE(decodedUnits(r) > decodedUnitBudget(key.size()));
  StepDecoder dec;
  StepRecord out;
  Status s = dec.decode(key, &out);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  CHECK(out == r);
}

TEST_CASE("records within the budget decode as before (synthetic steady state)") {
  argus::simulate::SyntheticSteps gen(0, 64);
  StepEncoder enc;
  StepDecoder dec;
  StepRecord out;
  for (int i = 0; i < 200; ++i) {
    StepRecord r = gen.next();
    std::string bytes;
    enc.encode(r, &bytes);
    Status s = dec.decode(bytes, &out);
    REQUIRE_MESSAGE(s.isOk(), s.toString());
    CHECK(decodedUnits(out) <= decodedUnitBudget(bytes.size()));
  }
}
