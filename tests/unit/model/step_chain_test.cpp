// Delta chains cut at block boundaries and attempt changes (docs/wire/step-record.md, "Chains").
#include "model/step_chain.h"

#include <doctest/doctest.h>

#include "simulate/synthetic_steps.h"

using namespace argus::model;

TEST_CASE("ChainedStepEncoder starts a keyframe at every block boundary and attempt change, nowhere else") {
  argus::simulate::SyntheticSteps gen(3, 16);
  ChainedStepEncoder encoder({}, 8);
  StepDecoder decoder;
  // Steps 5..20 of attempt 0, then attempt 1 restarting at step 14.
  std::vector<StepRecord> recs;
  for (uint64_t s = 5; s <= 20; ++s) {
    StepRecord r = gen.next();
    r.step = s;
    recs.push_back(r);
  }
  for (uint64_t s = 14; s <= 17; ++s) {
    StepRecord r = gen.next();
    r.step = s;
    r.attempt = 1;
    recs.push_back(r);
  }
  ChainPosition pos(8);
  for (const StepRecord& r : recs) {
    std::string bytes;
    encoder.encode(r, &bytes);
    bool want_key = pos.startsChain(r.attempt, r.step);
    pos.advance(r.attempt, r.step);
    CAPTURE(r.step);
    CAPTURE(r.attempt);
    CHECK(isKeyframe(bytes) == want_key);
    CHECK(want_key == (r.step == 5 || r.step == 8 || r.step == 16 || (r.attempt == 1 && r.step == 14)));
    // Each chain decodes from its keyframe alone.
    if (want_key) decoder.reset();
    StepRecord back;
    REQUIRE(decoder.decode(bytes, &back).isOk());
    CHECK(back == r);
  }
  CHECK_FALSE(isKeyframe(""));
}

TEST_CASE("within a large block, chains restart every kChainSteps steps") {
  argus::simulate::SyntheticSteps gen(3, 16);
  ChainedStepEncoder encoder({}, 256);
  for (uint64_t s = 10; s < 300; ++s) {
    StepRecord r = gen.next();
    r.step = s;
    std::string bytes;
    encoder.encode(r, &bytes);
    CAPTURE(s);
    CHECK(isKeyframe(bytes) == (s == 10 || s % kChainSteps == 0));
  }
}

TEST_CASE("block_steps 0 never cuts a chain; reset() and setBlockSteps() start one") {
  argus::simulate::SyntheticSteps gen(1, 8);
  ChainedStepEncoder encoder;
  std::string bytes;
  for (int i = 0; i < 600; ++i) {
    bytes.clear();
    encoder.encode(gen.next(), &bytes);
    CHECK(isKeyframe(bytes) == (i == 0));
  }
  encoder.reset();
  bytes.clear();
  encoder.encode(gen.next(), &bytes);
  CHECK(isKeyframe(bytes));
  encoder.setBlockSteps(4);
  bytes.clear();
  encoder.encode(gen.next(), &bytes);
  CHECK(isKeyframe(bytes));
}
