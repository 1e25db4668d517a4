#include "model/step_codec.h"

#include <doctest/doctest.h>

#include <limits>
#include <random>

#include "simulate/synthetic_steps.h"

using namespace argus::model;
using argus::simulate::SyntheticOptions;
using argus::simulate::SyntheticSteps;

namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

StepRecord hostileRecord() {
  StepRecord r;
  r.rank = std::numeric_limits<uint32_t>::max();
  r.step = std::numeric_limits<uint64_t>::max();
  r.attempt = std::numeric_limits<uint16_t>::max();
  r.start_ns = kMin;
  r.end_ns = kMax;
  r.iter_ns = kMin;
  r.flags = std::numeric_limits<uint32_t>::max();
  for (int i = 0; i < kPhaseColumnCount; ++i) r.phase_ns[i] = (i % 2) ? kMin : kMax;
  KernelStat a;
  a.signature = 0;
  a.count = 0;  // zero count, empty histogram
  a.total_ns = kMin;
  r.kernels.push_back(a);
  KernelStat b;
  b.signature = ~0ull;
  b.phase = Phase::kOther;
  b.count = std::numeric_limits<uint32_t>::max();
  b.total_ns = kMax;
  b.hist.add(kMax, std::numeric_limits<uint32_t>::max());
  b.hist.add(0, 7);
  r.kernels.push_back(b);
  KernelStat c;  // count disagrees with the histogram: still round-trips
  c.signature = 5;
  c.count = 1;
  c.total_ns = 0;
  c.hist.add(1000, 3);
  r.kernels.push_back(c);
  CollectiveStat cs;
  cs.op = CollectiveOp::kBarrier;
  cs.communicator = ~0ull;
  cs.size_class = 255;
  cs.peer_rank = 0;
  cs.count = std::numeric_limits<uint32_t>::max();
  cs.bytes = std::numeric_limits<uint64_t>::max();
  cs.total_ns = kMin;
  cs.wait_ns = kMax;
  r.collectives.push_back(cs);
  r.collectives.push_back(CollectiveStat{});
  r.stacks.push_back(StackStat{0, std::numeric_limits<uint32_t>::max()});
  r.events.push_back(EventRecord{EventKind::kDroppedEvents, kMin, ~0ull, ~0ull});
  r.events.push_back(EventRecord{EventKind::kMarker, kMax, 0, 0});
  r.canonicalize();
  return r;
}

void roundTripChain(StepCodecOptions opt, const std::vector<StepRecord>& recs) {
  StepEncoder enc(opt);
  StepDecoder dec;
  std::string buf;
  StepRecord out;
  for (size_t i = 0; i < recs.size(); ++i) {
    buf.clear();
    enc.encode(recs[i], &buf);
    argus::Status s = dec.decode(buf, &out);
    REQUIRE_MESSAGE(s.isOk(), "record " << i << ": " << s.toString());
    REQUIRE(out == recs[i]);
  }
}

std::vector<std::string> encodeChain(StepCodecOptions opt, const std::vector<StepRecord>& recs) {
  StepEncoder enc(opt);
  std::vector<std::string> out;
  for (const auto& r : recs) {
    out.emplace_back();
    enc.encode(r, &out.back());
  }
  return out;
}

std::vector<StepRecord> synthetic(int n, int sigs, uint64_t seed = 1) {
  SyntheticSteps gen(3, sigs, seed);
  std::vector<StepRecord> recs;
  for (int i = 0; i < n; ++i) recs.push_back(gen.next());
  return recs;
}

}  // namespace

TEST_CASE("empty record round-trips standalone and in a chain") {
  StepRecord empty;
  StepRecord out;
  REQUIRE(decodeStandalone(encodeStandalone(empty), &out).isOk());
  CHECK(out == empty);
  roundTripChain({}, {empty, empty, empty});
}

TEST_CASE("hostile values round-trip: INT64_MIN/MAX, zero counts, all-ones ids") {
  StepRecord h = hostileRecord();
  StepRecord out;
  std::string bytes = encodeStandalone(h);
  REQUIRE(decodeStandalone(bytes, &out).isOk());
  CHECK(out == h);
  // Alternate hostile and empty and synthetic records in delta mode, with and without zstd.
  auto syn = synthetic(3, 16);
  std::vector<StepRecord> chain = {h, StepRecord{}, h, syn[0], h, syn[1], syn[2], h};
  for (bool z : {false, true}) {
    roundTripChain({.delta = true, .zstd = z}, chain);
    roundTripChain({.delta = false, .zstd = z}, chain);
  }
}

TEST_CASE("long delta chains of synthetic records round-trip exactly") {
  for (int sigs : {1, 64, 256}) {
    auto recs = synthetic(sigs == 64 ? 600 : 150, sigs, 7);
    for (bool z : {false, true}) {
      roundTripChain({.delta = true, .zstd = z}, recs);
      roundTripChain({.delta = false, .zstd = z}, recs);
    }
  }
}

TEST_CASE("changing key lists: kernels, collectives and stacks appear and vanish") {
  std::mt19937_64 rng(5);
  auto base = synthetic(40, 32, 3);
  for (auto& r : base) {
    // Drop random entries and perturb keys so that lists differ from the previous record.
    auto thin = [&](auto& v) {
      for (size_t i = 0; i < v.size();) {
        if (rng() % 4 == 0) v.erase(v.begin() + static_cast<long>(i));
        else ++i;
      }
    };
    thin(r.kernels);
    thin(r.collectives);
    thin(r.stacks);
    if (rng() % 3 == 0 && !r.kernels.empty()) r.kernels[0].phase = Phase::kOther;
    if (rng() % 5 == 0) r.step += 10;  // gaps in steps
    if (rng() % 7 == 0) r.attempt += 1;
    r.canonicalize();
  }
  roundTripChain({}, base);
  roundTripChain({.delta = true, .zstd = true}, base);
}

TEST_CASE("65,536 kernels in one record") {
  StepRecord r;
  for (uint32_t i = 0; i < 65536; ++i) {
    KernelStat k;
    k.signature = 0x9e3779b97f4a7c15ull * (i + 1);
    k.phase = static_cast<Phase>(i % 7);
    k.count = 1 + i % 40;
    for (uint32_t j = 0; j < k.count; ++j) {
      int64_t d = 1000 + (i * 7919 + j * 104729) % 100000;
      k.total_ns += d;
      k.hist.add(d);
    }
    r.kernels.push_back(std::move(k));
  }
  r.canonicalize();
  StepRecord out;
  REQUIRE(decodeStandalone(encodeStandalone(r), &out).isOk());
  CHECK(out == r);
  StepRecord r2 = r;
  for (auto& k : r2.kernels) k.total_ns += 17;
  roundTripChain({.delta = true, .zstd = true}, {r, r2, r});
}

TEST_CASE("reset starts a fresh keyframe with fresh ids, on both sides") {
  auto recs = synthetic(10, 32);
  StepEncoder enc;
  StepDecoder dec;
  StepRecord out;
  for (int i = 0; i < 5; ++i) {
    std::string b;
    enc.encode(recs[i], &b);
    REQUIRE(dec.decode(b, &out).isOk());
  }
  enc.reset();
  std::string key;
  enc.encode(recs[5], &key);
  CHECK((static_cast<uint8_t>(key[0]) & 1) == 1);
  // A fresh decoder can start at the keyframe.
  StepDecoder fresh;
  REQUIRE(fresh.decode(key, &out).isOk());
  CHECK(out == recs[5]);
  // The old decoder too: a keyframe replaces its history.
  REQUIRE(dec.decode(key, &out).isOk());
  for (int i = 6; i < 10; ++i) {
    std::string b;
    enc.encode(recs[i], &b);
    REQUIRE(fresh.decode(b, &out).isOk());
    CHECK(out == recs[i]);
    REQUIRE(dec.decode(b, &out).isOk());
    CHECK(out == recs[i]);
  }
  dec.reset();
  std::string b;
  enc.encode(recs[0], &b);
  CHECK(dec.decode(b, &out).isCorruption());
}

TEST_CASE("delta records without or with mismatched history are Corruption") {
  auto recs = synthetic(6, 32);
  auto enc = encodeChain({}, recs);
  StepRecord out;
  StepDecoder none;
  argus::Status s = none.decode(enc[1], &out);
  CHECK(s.isCorruption());
  CHECK(s.message().find("history") != std::string::npos);
  CHECK(decodeStandalone(enc[1], &out).isCorruption());

  // Skipping a record breaks the chain.
  StepDecoder dec;
  REQUIRE(dec.decode(enc[0], &out).isOk());
  CHECK(dec.decode(enc[2], &out).isCorruption());
  // ... and the failed decode did not disturb the history: the right record still decodes.
  REQUIRE(dec.decode(enc[1], &out).isOk());
  CHECK(out == recs[1]);

  // History from another session (another rank's stream) is rejected.
  SyntheticSteps other(9, 32, 99);
  std::vector<StepRecord> orecs;
  for (int i = 0; i < 3; ++i) orecs.push_back(other.next());
  for (auto& r : orecs) r.step += 5;
  auto oenc = encodeChain({}, orecs);
  StepDecoder mixed;
  REQUIRE(mixed.decode(enc[0], &out).isOk());
  CHECK(mixed.decode(oenc[1], &out).isCorruption());
}

TEST_CASE("random, truncated and bit-flipped bytes yield Corruption, never a crash") {
  auto recs = synthetic(30, 48, 11);
  recs.push_back(hostileRecord());
  for (bool z : {false, true}) {
    auto enc = encodeChain({.delta = true, .zstd = z}, recs);
    std::mt19937_64 rng(z ? 77 : 78);
    int accepted = 0, total = 0;
    for (int round = 0; round < 3000; ++round) {
      // Bring a decoder to the history of record k-1, then feed a damaged record k.
      size_t k = rng() % enc.size();
      StepDecoder dec;
      StepRecord out;
      for (size_t i = 0; i < k; ++i) REQUIRE(dec.decode(enc[i], &out).isOk());
      std::string bad = enc[k];
      switch (round % 4) {
        case 0:
          bad.resize(rng() % bad.size());
          break;
        case 1:
          for (int f = 0; f < 1 + static_cast<int>(rng() % 3); ++f) bad[rng() % bad.size()] ^= static_cast<char>(1u << (rng() % 8));
          break;
        case 2:
          for (auto& c : bad) c = static_cast<char>(rng());
          bad[0] = static_cast<char>(0x10 | (rng() % 4));  // valid version, random flags
          break;
        default:
          bad.resize(rng() % 200);
          for (auto& c : bad) c = static_cast<char>(rng());
          break;
      }
      ++total;
      argus::Status s = dec.decode(bad, &out);
      if (s.isOk()) {
        ++accepted;  // a flip may land in a value field: decodes to a different record
      } else {
        CHECK_MESSAGE((s.isCorruption() || s.code() == argus::Status::Code::kResourceExhausted), s.toString());
        // A failed decode leaves the history intact.
        if (k + 1 < enc.size()) {
          REQUIRE_MESSAGE(dec.decode(enc[k], &out).isOk(), "after failure in record " << k);
          CHECK(out == recs[k]);
        }
      }
    }
    CHECK(accepted < total);
  }
}

TEST_CASE("unknown versions and reserved flags are rejected") {
  std::string b = encodeStandalone(StepRecord{});
  StepRecord out;
  for (char version : {'\x01', '\x31', '\xf1'}) {  // 0, 3 and 15: outside 1-2
    std::string unknown = b;
    unknown[0] = version;
    CHECK(decodeStandalone(unknown, &out).isCorruption());
  }
  std::string reserved = b;
  reserved[0] = static_cast<char>(b[0] | 0x08);
  CHECK(decodeStandalone(reserved, &out).isCorruption());
  CHECK(decodeStandalone("", &out).isCorruption());
  std::string trailing = b + "x";
  CHECK(decodeStandalone(trailing, &out).isCorruption());
}

TEST_CASE("delta coding pays: synthetic 64-signature steps stay small") {
  auto recs = synthetic(200, 64, 21);
  auto key = encodeChain({.delta = false}, recs);
  auto del = encodeChain({.delta = true}, recs);
  size_t key_bytes = 0, del_bytes = 0;
  for (size_t i = 1; i < recs.size(); ++i) {
    key_bytes += key[i].size();
    del_bytes += del[i].size();
  }
  MESSAGE("keyframe " << key_bytes / (recs.size() - 1) << " B/record, delta " << del_bytes / (recs.size() - 1) << " B/record");
  CHECK(del_bytes < key_bytes);
}

TEST_CASE("sketch totals cost no bytes and round-trip exactly") {
  auto exact = synthetic(100, 64, 5);
  auto sketched = exact;
  for (auto& r : sketched) {
    for (auto& k : r.kernels) k.total_ns = k.hist.sketchTotal();
  }
  roundTripChain({.delta = true, .zstd = false}, sketched);
  auto a = encodeChain({.delta = true, .zstd = false}, exact);
  auto b = encodeChain({.delta = true, .zstd = false}, sketched);
  size_t exact_bytes = 0, sketch_bytes = 0;
  for (size_t i = 1; i < exact.size(); ++i) {
    exact_bytes += a[i].size();
    sketch_bytes += b[i].size();
  }
  MESSAGE("delta records: exact totals " << exact_bytes / (exact.size() - 1) << " B, sketch totals " << sketch_bytes / (exact.size() - 1) << " B");
  // Every total is predicted, so the totals block is its flag byte alone: at least a byte
  // per kernel saved.
  CHECK(sketch_bytes + 64 * (exact.size() - 1) <= exact_bytes);
}
