// Explicit histograms (dense nibble, dense varint, sparse; docs/wire/step-record.md,
// "Kernels") read by hand-made keyframes, through both decoder paths: StepDecoder (which
// also keeps the history) and decodeStandalone (which keeps none). Valid payloads give the
// exact buckets; each malformed one is Corruption naming what is wrong, and a StepDecoder
// that failed on one still continues its chain.
#include <doctest/doctest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "model/step_codec.h"

using namespace argus::model;
using argus::Status;
using Bucket = DurationHistogram::Bucket;

namespace {

void putVarint(std::string& s, uint64_t v) { argus::ByteWriter(&s).putVarint(v); }
uint64_t zz(int64_t v) { return argus::zigzagEncode(v); }

// A keyframe with one forward kernel (signature 0x5151, `count` launches, total 1,000 ns)
// whose histogram is `mode` with the given payload bytes, and no other lists.
std::string keyframe(uint8_t mode, uint32_t count, std::initializer_list<uint8_t> payload) {
  std::string s(1, '\x11');                           // version 1, keyframe
  s.append(7, '\0');                                  // rank, step, attempt, start, span, iter, flags
  s.append(10, '\0');                                 // phases
  s.push_back('\x02');                                // one kernel
  s.push_back('\x01');                                // new signature, phase forward
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>(0x5151ull >> (8 * i)));
  putVarint(s, mode | (zz(count) << 3));              // tag
  putVarint(s, zz(1000));                             // total
  for (uint8_t b : payload) s.push_back(static_cast<char>(b));
  s.append("\x01\x01\x00", 3);                        // no collectives, stacks, events
  return s;
}

// 576 as zz(first - 0), two bytes.
constexpr uint8_t kFirstLo = 0x80, kFirstHi = 0x09;

void checkDecodes(const std::string& bytes, const std::vector<Bucket>& want) {
  for (bool standalone : {false, true}) {
    StepRecord out;
    StepDecoder dec;
    Status s = standalone ? decodeStandalone(bytes, &out) : dec.decode(bytes, &out);
    REQUIRE_MESSAGE(s.isOk(), s.toString());
    REQUIRE(out.kernels.size() == 1);
    CHECK(out.kernels[0].hist.buckets() == want);
    CHECK(out.kernels[0].signature == 0x5151);
  }
}

void checkRejects(const std::string& bytes, const std::string& what) {
  for (bool standalone : {false, true}) {
    StepRecord out;
    StepDecoder dec;
    Status s = standalone ? decodeStandalone(bytes, &out) : dec.decode(bytes, &out);
    CHECK(s.code() == Status::Code::kCorruption);
    CHECK_MESSAGE(s.message().find(what) != std::string::npos, s.message());
  }
}

}  // namespace

TEST_CASE("dense nibble histograms: zero slots skipped, ends and padding checked") {
  checkDecodes(keyframe(2, 5, {kFirstLo, kFirstHi, 2, 0x02, 0x03}), {{576, 2}, {578, 3}});
  checkDecodes(keyframe(2, 1, {kFirstLo, kFirstHi, 0, 0x01}), {{576, 1}});
  checkDecodes(keyframe(2, 30, {kFirstLo, kFirstHi, 3, 0xff, 0xff}), {{576, 15}, {577, 15}, {578, 15}, {579, 15}});
  checkRejects(keyframe(2, 1, {kFirstLo, kFirstHi, 1, 0x10}), "does not start and end on a non-empty bucket");
  checkRejects(keyframe(2, 1, {kFirstLo, kFirstHi, 1, 0x01}), "does not start and end on a non-empty bucket");
  checkRejects(keyframe(2, 1, {kFirstLo, kFirstHi, 0, 0x11}), "padding nibble not zero");
  checkRejects(keyframe(2, 1, {kFirstLo, kFirstHi, 20, 0x11}), "truncated");
  checkRejects(keyframe(2, 1, {0xc0, 0x22, 0, 0x01}), "first index out of range");  // zz -> 2208
  checkRejects(keyframe(2, 1, {0x90, 0x22, 5, 0x11, 0x11, 0x11}), "span out of range");  // first 2184
}

TEST_CASE("dense varint histograms: multi-byte counts, zero slots skipped, ends checked") {
  checkDecodes(keyframe(3, 301, {kFirstLo, kFirstHi, 2, 0xac, 0x02, 0x00, 0x01}), {{576, 300}, {578, 1}});
  checkDecodes(keyframe(3, 0, {kFirstLo, kFirstHi, 0, 0xff, 0xff, 0xff, 0xff, 0x0f}), {{576, 0xffffffffu}});
  checkRejects(keyframe(3, 1, {kFirstLo, kFirstHi, 1, 0x01, 0x00}), "does not start and end on a non-empty bucket");
  checkRejects(keyframe(3, 1, {kFirstLo, kFirstHi, 1, 0x00, 0x01}), "does not start and end on a non-empty bucket");
  checkRejects(keyframe(3, 1, {kFirstLo, kFirstHi, 0, 0x80, 0x80, 0x80, 0x80, 0x10}), "histogram bucket count invalid");
  checkRejects(keyframe(3, 1, {kFirstLo, kFirstHi, 200, 0x01}), "span exceeds the bytes remaining");
}

TEST_CASE("sparse histograms: gaps, counts and indices checked") {
  checkDecodes(keyframe(4, 3, {2, kFirstLo, kFirstHi, 1, 9, 2}), {{576, 1}, {586, 2}});
  checkDecodes(keyframe(4, 0, {0}), {});
  checkRejects(keyframe(4, 1, {2, kFirstLo, kFirstHi, 0, 0, 1}), "histogram bucket count invalid");
  checkRejects(keyframe(4, 1, {2, 0x90, 0x22, 1, 0, 1}), "histogram index out of range");  // 2184, then 2185
  checkRejects(keyframe(4, 1, {2, kFirstLo, kFirstHi, 1, 0xff, 0x7f, 1}), "index gap out of range");
}

TEST_CASE("a StepDecoder keeps its chain after a keyframe with a bad histogram") {
  StepRecord a;
  a.step = 7;
  KernelStat k;
  k.signature = 99;
  k.phase = Phase::kBackward;
  k.count = 2;
  k.total_ns = 3000;
  k.hist.add(1000);
  k.hist.add(2000);
  a.kernels.push_back(k);
  StepRecord b = a;
  b.step = 8;
  b.kernels[0].hist.add(5000);
  b.kernels[0].count = 3;
  StepEncoder enc;
  std::string ka, db;
  enc.encode(a, &ka);
  enc.encode(b, &db);
  StepDecoder dec;
  StepRecord out;
  REQUIRE(dec.decode(ka, &out).isOk());
  CHECK(dec.decode(keyframe(2, 1, {kFirstLo, kFirstHi, 1, 0x10}), &out).code() == Status::Code::kCorruption);
  REQUIRE(dec.decode(db, &out).isOk());
  CHECK(out == b);
}
