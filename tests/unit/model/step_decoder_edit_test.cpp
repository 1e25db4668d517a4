// Version 2 histogram forms read from hand-made records (docs/wire/step-record.md,
// "Kernels"): `edit` against the previous step's histogram, `single`, and the totals block.
// Valid payloads give the exact buckets and totals; each malformed one is Corruption naming
// what is wrong, and the decoder keeps its chain after it.
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

void putBytes(std::string& s, std::initializer_list<uint8_t> bytes) {
  for (uint8_t b : bytes) s.push_back(static_cast<char>(b));
}

// A version 2 keyframe of step 0 with one forward kernel (signature 0x5151) whose histogram
// is {576: 3, 580: 2} in sparse form, total = its sketch total.
std::string keyframe() {
  std::string s(1, '\x21');  // version 2, keyframe
  s.append(7, '\0');         // rank, step, attempt, start, span, iter, flags
  s.append(10, '\0');        // phases
  s.push_back('\x02');       // one kernel
  s.push_back('\x01');       // new signature, phase forward
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>(0x5151ull >> (8 * i)));
  putVarint(s, 4 | (zz(5) << 3));  // sparse, count 5
  putVarint(s, 2);                 // two buckets
  putVarint(s, zz(576));
  putVarint(s, 3);
  putVarint(s, 580 - 576 - 1);
  putVarint(s, 2);
  s.push_back('\0');            // totals as predicted
  s.append("\x01\x01\x00", 3);  // no collectives, stacks, events
  return s;
}

// The delta record after it (step 1): the same kernel with tag `tag` and histogram payload
// `payload`, then `totals` (the totals block).
std::string delta(uint64_t tag, std::initializer_list<uint8_t> payload, std::initializer_list<uint8_t> totals = {0}) {
  std::string s(1, '\x20');  // version 2, delta
  s.push_back('\x01');       // chain_seq 1
  s.push_back('\x00');       // prev step low byte
  s.append(7, '\0');         // rank, step (= prev + 1), attempt, start, span, iter, flags
  s.append(10, '\0');        // phases
  s.push_back('\0');         // kernels: same keys
  putVarint(s, tag);
  putBytes(s, payload);
  putBytes(s, totals);
  s.append("\x00\x00\x00", 3);  // collectives, stacks: same (none); no events
  return s;
}

int64_t sketch(const std::vector<Bucket>& b) { return DurationHistogram::sketchTotal(b); }

void checkDelta(const std::string& bytes, uint32_t count, const std::vector<Bucket>& want) {
  StepDecoder dec;
  StepRecord out;
  REQUIRE(dec.decode(keyframe(), &out).isOk());
  REQUIRE(out.kernels.size() == 1);
  CHECK(out.kernels[0].total_ns == sketch({{576, 3}, {580, 2}}));
  Status s = dec.decode(bytes, &out);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  REQUIRE(out.kernels.size() == 1);
  CHECK(out.kernels[0].count == count);
  CHECK(out.kernels[0].hist.buckets() == want);
  CHECK(out.kernels[0].total_ns == sketch(want));
}

void checkCorrupt(const std::string& bytes, const std::string& what) {
  StepDecoder dec;
  StepRecord out;
  REQUIRE(dec.decode(keyframe(), &out).isOk());
  Status s = dec.decode(bytes, &out);
  CHECK(s.code() == Status::Code::kCorruption);
  CHECK_MESSAGE(s.message().find(what) != std::string::npos, s.message());
  // The failed record is not part of the chain: the next valid one still decodes.
  s = dec.decode(delta(0, {}), &out);
  CHECK_MESSAGE(s.isOk(), s.toString());
}

}  // namespace

TEST_CASE("edit: inserted buckets merge with the previous ones, a count falling to 0 removes a bucket") {
  // Insert 578:4; 576 loses its 3 (removed), 580 gains 1: {578: 4, 580: 3}, count 7.
  checkDelta(delta(5 | (zz(2) << 3), {1, static_cast<uint8_t>(zz(2)), 4, static_cast<uint8_t>(zz(-3)), static_cast<uint8_t>(zz(1))}), 7,
             {{578, 4}, {580, 3}});
  // Inserts below, between and above the previous buckets; counts unchanged.
  checkDelta(delta(5 | (zz(3) << 3), {3, static_cast<uint8_t>(zz(-6)), 1, 7, 1, 2, 1, 0, 0}), 8, {{570, 1}, {576, 3}, {578, 1}, {580, 2}, {581, 1}});
  // No inserts, counts moved.
  checkDelta(delta(5, {0, static_cast<uint8_t>(zz(-1)), static_cast<uint8_t>(zz(1))}), 5, {{576, 2}, {580, 3}});
}

TEST_CASE("single: one bucket holding every launch, indexed against the previous histogram") {
  checkDelta(delta(1 | (zz(-1) << 3), {static_cast<uint8_t>(zz(-2))}), 4, {{574, 4}});
  checkCorrupt(delta(1 | (zz(-5) << 3), {0}), "single-bucket histogram with count 0");
  checkCorrupt(delta(1, {0xff, 0x7f}), "histogram index out of range");
}

TEST_CASE("edit: malformed payloads are Corruption naming the fault") {
  checkCorrupt(delta(5, {1, 0, 1, 0, 0}), "inserts a bucket the previous one has");
  checkCorrupt(delta(5, {0, static_cast<uint8_t>(zz(-4)), 0}), "histogram bucket count invalid");
  checkCorrupt(delta(5, {1, 0xff, 0x7f, 1, 0, 0}), "histogram inserted index out of range");
  checkCorrupt(delta(5, {1, 2, 0, 0, 0}), "histogram bucket count invalid");
  checkCorrupt(delta(6, {}), "unknown histogram mode 6");
}

TEST_CASE("edit needs a previous histogram, and version 1 has no edit mode") {
  std::string key = keyframe();
  // The same keyframe with an empty histogram (sparse, n = 0, count 0).
  std::string empty(1, '\x21');
  empty.append(17, '\0');
  empty.append("\x02\x01", 2);
  for (int i = 0; i < 8; ++i) empty.push_back(static_cast<char>(0x5151ull >> (8 * i)));
  empty.append("\x04\x00\x00\x01\x01\x00", 6);  // sparse, count 0, no buckets; totals as predicted; no lists
  StepDecoder dec;
  StepRecord out;
  REQUIRE(dec.decode(empty, &out).isOk());
  Status s = dec.decode(delta(5 | (zz(1) << 3), {1, 0, 1}), &out);
  CHECK(s.isCorruption());
  CHECK_MESSAGE(s.message().find("histogram edit without a previous histogram") != std::string::npos, s.message());

  std::string v1 = delta(5, {0, 0, 0});
  v1[0] = '\x10';
  StepDecoder dec1;
  REQUIRE(dec1.decode(key, &out).isOk());
  s = dec1.decode(v1, &out);
  CHECK(s.isCorruption());
  CHECK_MESSAGE(s.message().find("unknown histogram mode 5") != std::string::npos, s.message());
}

TEST_CASE("the totals block: exact deviations from the prediction, and only flags 0 and 1") {
  // Count and buckets unchanged; total 1,234 ns above the prediction.
  StepDecoder dec;
  StepRecord out;
  REQUIRE(dec.decode(keyframe(), &out).isOk());
  static_assert(2 * 1234 == 0x13 * 128 + (0xa4 & 0x7f));  // zz(1234) as a varint: a4 13
  Status s = dec.decode(delta(0, {}, {1, 0xa4, 0x13}), &out);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  CHECK(out.kernels[0].total_ns == sketch({{576, 3}, {580, 2}}) + 1234);
  checkCorrupt(delta(0, {}, {2}), "kernel totals flag 2");
}
