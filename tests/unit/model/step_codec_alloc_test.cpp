// The step codec allocates nothing per record in steady state (the ingest path's contract,
// see bench/step_codec.cpp): delta encode into a reused buffer, delta decode and
// decodeStandalone into a reused record, encodeStandalone into a reused buffer.
// This executable replaces the global operator new to count allocations.
#include <doctest/doctest.h>

#include "tests/unit/alloc_counter.h"

#include <string>
#include <vector>

#include "model/step_codec.h"
#include "simulate/synthetic_steps.h"

using argus::testing::allocationCount;

using namespace argus::model;

namespace {

struct Stream {
  std::vector<StepRecord> recs;
  std::vector<std::string> wire;  // delta stream
  std::vector<std::string> keys;  // standalone encodings
};

Stream makeStream(int sigs, int n) {
  argus::simulate::SyntheticSteps gen(1, sigs, 5);
  Stream s;
  StepEncoder enc;
  for (int i = 0; i < n; ++i) {
    s.recs.push_back(gen.next());
    s.wire.emplace_back();
    enc.encode(s.recs.back(), &s.wire.back());
    s.keys.push_back(encodeStandalone(s.recs.back()));
  }
  return s;
}

}  // namespace

TEST_CASE("steady state allocates nothing: delta encode/decode, standalone encode/decode") {
  for (int sigs : {64, 256}) {
    Stream s = makeStream(sigs, 60);
    StepEncoder enc;
    StepDecoder dec;
    StepRecord out, head;
    std::string buf, head_buf;
    // The first passes size every buffer, list and histogram (capacity only grows when a
    // record is larger than any before; a keyframe swaps the decoder's id tables with the
    // spare set kept for rollback, so both sets need a pass). The third pass over the same
    // stream, from a reset, must not allocate, except where a record has more kernels than
    // the one before: a std::vector destroys the elements it shrinks away (the synthetic
    // stream gains a kernel at a JIT compile, and the replay starts shorter again).
    for (int pass = 0; pass < 3; ++pass) {
      enc.reset();
      dec.reset();
      long allocations = 0;
      for (size_t i = 0; i < s.recs.size(); ++i) {
        long before = allocationCount();
        buf.clear();
        enc.encode(s.recs[i], &buf);
        REQUIRE(dec.decode(s.wire[i], &out).isOk());
        head_buf.clear();
        encodeStandalone(out, &head_buf);
        REQUIRE(decodeStandalone(s.keys[i], &head).isOk());
        if (pass == 0) {
          REQUIRE(buf == s.wire[i]);
          REQUIRE(head_buf == s.keys[i]);
          REQUIRE(out == s.recs[i]);
          REQUIRE(head == s.recs[i]);
        }
        bool grows = i > 0 && s.recs[i].kernels.size() > s.recs[i - 1].kernels.size();
        if (!grows) allocations += allocationCount() - before;
      }
      if (pass == 2) CHECK_MESSAGE(allocations == 0, sigs << " signatures: " << allocations << " allocations in " << s.recs.size() << " records");
    }
  }
}
