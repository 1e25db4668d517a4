// Integer and histogram codecs: round-trips with hostile values, and random bytes that
// must come back as a clean Corruption status.
#include <doctest/doctest.h>

#include <climits>
#include <random>
#include <tuple>

#include "storage/bitpack_codec.h"
#include "storage/column_codec.h"
#include "storage/hist_codec.h"
#include "storage/periodic_codec.h"

using namespace argus;
using namespace argus::storage;

namespace {

const CodecId kIntCodecs[] = {CodecId::kPlain, CodecId::kConstant, CodecId::kDelta, CodecId::kDeltaOfDelta,
                              CodecId::kDictionary, CodecId::kGroupDelta, CodecId::kLinear, CodecId::kBitPack, CodecId::kPeriodic};

RowContext modGroups(size_t n, uint32_t k) {
  RowContext g;
  for (size_t i = 0; i < n; ++i) g.ids.push_back(static_cast<uint32_t>(i % k));
  g.count = n == 0 ? 0 : std::min<uint32_t>(k, static_cast<uint32_t>(n));
  return g;
}

void roundTrip(const std::vector<int64_t>& values, const char* what) {
  CAPTURE(what);
  CAPTURE(values.size());
  RowContext g = modGroups(values.size(), 7);
  for (CodecId c : kIntCodecs) {
    std::string bytes;
    if (!encodeIntsWith(c, values, &g, &bytes)) continue;
    CAPTURE(codecName(static_cast<uint8_t>(c)));
    std::vector<int64_t> out;
    Status s = decodeInts(static_cast<uint8_t>(c), bytes, values.size(), &g, &out);
    REQUIRE_MESSAGE(s.isOk(), s.toString());
    CHECK(out == values);
  }
  EncodedPayload best = encodeInts(values, &g);
  std::vector<int64_t> out;
  Status s = decodeInts(best.codec, best.bytes, values.size(), &g, &out);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  CHECK(out == values);
}

}  // namespace

TEST_CASE("residual codecs round-trip against their context") {
  std::mt19937_64 rng(17);
  std::vector<model::DurationHistogram> hists(500);
  std::vector<int64_t> totals, prediction;
  for (auto& h : hists) {
    int64_t sum = 0;
    for (int i = 0, n = 1 + static_cast<int>(rng() % 30); i < n; ++i) {
      int64_t d = 1000 + static_cast<int64_t>(rng() % 100000);
      h.add(d);
      sum += d;
    }
    totals.push_back(sum);
    prediction.push_back(static_cast<int64_t>(rng()));
  }
  totals.push_back(INT64_MIN);
  hists.push_back(model::DurationHistogram());
  prediction.push_back(INT64_MAX);
  RowContext ctx;
  ctx.hists = hists;
  ctx.prediction = prediction;
  for (CodecId c : {CodecId::kHistResidual, CodecId::kSumResidual}) {
    std::string bytes;
    REQUIRE(encodeIntsWith(c, totals, &ctx, &bytes));
    std::vector<int64_t> out;
    REQUIRE(decodeInts(static_cast<uint8_t>(c), bytes, totals.size(), &ctx, &out).isOk());
    CHECK(out == totals);
    CHECK(decodeInts(static_cast<uint8_t>(c), bytes, totals.size(), nullptr, &out).isCorruption());
  }
  // The prediction is integer arithmetic: fixed values, the same on every machine.
  model::DurationHistogram h;
  h.add(1000, 10);
  CHECK(histPrediction(h) == histPrediction(h));
  CHECK(std::llabs(histPrediction(h) - 10000) < 10000 / 50);
  model::DurationHistogram huge;
  huge.add(INT64_MAX, 0xffffffffu);
  CHECK(histPrediction(huge) == INT64_MAX);
}

TEST_CASE("integer codecs round-trip hostile values") {
  std::mt19937_64 rng(42);
  roundTrip({}, "empty");
  roundTrip({INT64_MIN}, "one INT64_MIN");
  roundTrip({INT64_MAX}, "one INT64_MAX");
  roundTrip({0}, "one zero");
  roundTrip({INT64_MIN, INT64_MAX, INT64_MIN, 0, -1, INT64_MAX, 1}, "extremes");
  roundTrip({INT64_MAX, INT64_MIN}, "wrapping delta");
  roundTrip(std::vector<int64_t>(65536, 7), "65536 constant");
  roundTrip(std::vector<int64_t>(65536, INT64_MIN), "65536 INT64_MIN");
  std::vector<int64_t> v(65536);
  for (auto& x : v) x = static_cast<int64_t>(rng());
  roundTrip(v, "65536 random");
  for (size_t i = 0; i < v.size(); ++i) v[i] = 1'700'000'000'000'000'000 + static_cast<int64_t>(i) * 1'000'000 + static_cast<int64_t>(rng() % 1000);
  roundTrip(v, "timestamps");
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(i) * 3 - 5;
  roundTrip(v, "linear");
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(rng() % 5) * 1000003;
  roundTrip(v, "few distinct");
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(rng() % 300);
  roundTrip(v, "300 distinct (wide dictionary)");
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<int64_t> w(rng() % 40);
    for (auto& x : w) x = (rng() & 1) ? static_cast<int64_t>(rng()) : static_cast<int64_t>(rng() % 16) - 8;
    roundTrip(w, "small random");
  }
}

TEST_CASE("the analysis pass picks small codecs") {
  std::vector<int64_t> constant(1000, 123456789);
  CHECK(encodeInts(constant, nullptr).codec == static_cast<uint8_t>(CodecId::kConstant));
  std::vector<int64_t> steps(256);
  for (size_t i = 0; i < steps.size(); ++i) steps[i] = 1024 + static_cast<int64_t>(i);
  auto p = encodeInts(steps, nullptr);
  CHECK(p.codec == static_cast<uint8_t>(CodecId::kLinear));
  CHECK(p.bytes.size() <= 4);
  // A per-group constant that differs between groups: group-delta then zstd wins.
  RowContext g = modGroups(64 * 256, 64);
  std::vector<int64_t> per_group(64 * 256);
  for (size_t i = 0; i < per_group.size(); ++i) per_group[i] = static_cast<int64_t>((i % 64) * 7919 + 13);
  p = encodeInts(per_group, &g);
  CHECK(p.bytes.size() < 200);
}

TEST_CASE("a codec hint is remembered only from a chunk of many values") {
  // Kernel signatures: four 64-bit hashes repeating. Analysed, they shrink by far.
  std::vector<int64_t> signatures(400);
  const uint64_t four[] = {6320992349818682228ull, 18096824354772613859ull, 1234567890123456789ull, 9876543210987654321ull};
  for (size_t i = 0; i < signatures.size(); ++i) signatures[i] = static_cast<int64_t>(four[i % 4]);
  const EncodedPayload chosen_once = encodeInts(signatures, nullptr);
  const size_t analysed = chosen_once.bytes.size();
  CHECK(analysed < 200);
  // Plain (ten-byte varints) and a dictionary (a byte per row) both zstd to ~60 bytes;
  // periodic codes the first four and one run, fewer bytes still and no frame to expand.
  CHECK(chosen_once.codec == static_cast<uint8_t>(CodecId::kPeriodic));
  // An empty block first (a rank whose kernels start later): its plain encoding must not
  // become the choice for the full blocks after it.
  CodecHint hint;
  CHECK(encodeInts(std::vector<int64_t>{}, nullptr, &hint).bytes.empty());
  CHECK(encodeInts(std::vector<int64_t>{5, 9}, nullptr, &hint).codec != 0);
  CHECK(hint.codec == 0);
  CHECK(encodeInts(signatures, nullptr, &hint).bytes.size() == analysed);
  CHECK(hint.codec != 0);
  // Then the hint serves the next chunks of the column.
  const uint8_t chosen = hint.codec;
  CHECK(encodeInts(signatures, nullptr, &hint).codec == chosen);
  CHECK(hint.reuse_left == kCodecHintReuse - 1);
  // The same for histograms: a block of empty histograms does not choose for the next.
  CodecHint hist_hint;
  encodeHists(std::vector<model::DurationHistogram>(3), nullptr, &hist_hint);
  CHECK(hist_hint.codec == 0);
}

TEST_CASE("bit-pack: every width and row count round-trips; offsets past 56 bits do not apply") {
  std::mt19937_64 rng(56);
  for (int width = 0; width <= kMaxBitPackWidth; ++width) {
    for (size_t rows : {1, 2, 7, 8, 9, 63, 64, 65, 256}) {
      CAPTURE(width);
      CAPTURE(rows);
      const int64_t lo = static_cast<int64_t>(rng());
      std::vector<int64_t> v(rows);
      for (auto& x : v) x = static_cast<int64_t>(static_cast<uint64_t>(lo) + (width == 0 ? 0 : rng() >> (64 - width)));
      std::string bytes;
      REQUIRE(encodeIntsWith(CodecId::kBitPack, v, nullptr, &bytes));
      const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
      CHECK(bytes.size() == bitPackSize(*mn, bitPackWidth(*mn, *mx), rows));
      std::vector<int64_t> out;
      REQUIRE(decodeInts(static_cast<uint8_t>(CodecId::kBitPack), bytes, rows, nullptr, &out).isOk());
      CHECK(out == v);
      // A window decodes just its rows and the rest of the blocks of eight that cover them
      // (none for an empty window); the others are left as they were.
      for (int t = 0; t < 4; ++t) {
        const size_t b = rng() % (rows + 1), e = b + rng() % (rows + 1 - b);
        const size_t lo = b == e ? b : b / 8 * 8, hi = b == e ? e : std::min(rows, (e + 7) / 8 * 8);
        CAPTURE(b);
        CAPTURE(e);
        const std::vector<int64_t> before(rows, 42);
        out = before;
        REQUIRE(decodeBitPack(bytes, rows, &out, b, e).isOk());
        REQUIRE(out.size() == rows);
        CHECK(std::equal(out.begin() + static_cast<ptrdiff_t>(b), out.begin() + static_cast<ptrdiff_t>(e), v.begin() + static_cast<ptrdiff_t>(b)));
        CHECK(std::equal(out.begin(), out.begin() + static_cast<ptrdiff_t>(lo), before.begin()));
        CHECK(std::equal(out.begin() + static_cast<ptrdiff_t>(hi), out.end(), before.begin() + static_cast<ptrdiff_t>(hi)));
      }
    }
  }
  std::string bytes;
  CHECK_FALSE(encodeIntsWith(CodecId::kBitPack, std::vector<int64_t>{0, int64_t{1} << 56}, nullptr, &bytes));
  CHECK_FALSE(encodeIntsWith(CodecId::kBitPack, std::vector<int64_t>{}, nullptr, &bytes));
}

TEST_CASE("bit-pack payload: base, width, then offsets from bit 0 up; a wrong size or width is Corruption") {
  // 1000, 1003, 1001: base 1000 (zigzag 2000 = d0 0f), width 2, offsets 0 3 1 -> 0b01'11'00.
  std::string bytes;
  REQUIRE(encodeIntsWith(CodecId::kBitPack, std::vector<int64_t>{1000, 1003, 1001}, nullptr, &bytes));
  CHECK(bytes == std::string("\xd0\x0f\x02\x1c", 4));
  const uint8_t codec = static_cast<uint8_t>(CodecId::kBitPack);
  std::vector<int64_t> out;
  REQUIRE(decodeInts(codec, bytes, 3, nullptr, &out).isOk());
  CHECK(out == std::vector<int64_t>{1000, 1003, 1001});
  CHECK(decodeInts(codec, bytes, 5, nullptr, &out).isCorruption());
  CHECK(decodeInts(codec, bytes + std::string(1, '\0'), 3, nullptr, &out).isCorruption());
  Status wide = decodeInts(codec, std::string("\xd0\x0f\x39\x00", 4), 0, nullptr, &out);
  CHECK(wide.isCorruption());
  CHECK(wide.message().find("width 57") != std::string::npos);
}

TEST_CASE("periodic payload: period, then literal runs (deltas a period back) and repeat counts") {
  // Period 2 over 1 5 1 5 1 5 9 5 1 5 ...: literals 1 5, a repeat of 4 rows, then 9 (+8
  // against the 1 two rows back), 5 (a repeat too short for a run: +0) and 1 (-8 against
  // the 9) as literals, then a repeat of the last 7 rows.
  const std::vector<int64_t> v{1, 5, 1, 5, 1, 5, 9, 5, 1, 5, 1, 5, 1, 5, 1, 5};
  std::string bytes;
  encodePeriodic(v, 2, &bytes);
  CHECK(bytes == std::string("\x02\x02\x02\x0a\x04\x03\x10\x00\x0f\x07", 10));
  std::vector<int64_t> out;
  REQUIRE(decodePeriodic(bytes, v.size(), &out).isOk());
  CHECK(out == v);
  PeriodicChoice choice;
  REQUIRE(choosePeriod(v, &choice));
  CHECK(choice.period == 2);
  CHECK(choice.bytes == bytes.size());
  CHECK_FALSE(choosePeriod(std::vector<int64_t>(15, 3), &choice));  // too few values to pay
  std::vector<int64_t> distinct(100);
  for (size_t i = 0; i < distinct.size(); ++i) distinct[i] = static_cast<int64_t>(i);
  CHECK_FALSE(choosePeriod(distinct, &choice));  // nothing recurs

  const uint8_t codec = static_cast<uint8_t>(CodecId::kPeriodic);
  auto corrupt = [&](std::string payload, size_t rows, const char* says) {
    CAPTURE(says);
    Status s = decodeInts(codec, payload, rows, nullptr, &out);
    REQUIRE(s.isCorruption());
    CHECK(s.message().find(says) != std::string::npos);
  };
  corrupt(std::string("\x00\x01\x00", 3), 1, "period 0");
  corrupt(std::string("\x05\x01\x00", 3), 4, "period 5 exceeds limit 4");
  corrupt(std::string("\x01\x00", 2), 4, "empty literal run");
  corrupt(std::string("\x01\x05\x00\x00\x00\x00\x00", 7), 4, "literal count 5 exceeds limit 4");
  corrupt(std::string("\x02\x01\x00\x03", 4), 4, "before a full period");
  corrupt(std::string("\x01\x01\x00\x00", 4), 4, "empty repeat run");
  corrupt(std::string("\x01\x01\x00\x04", 4), 4, "repeat count 4 exceeds limit 3");
  corrupt(bytes + "x", v.size(), "trailing bytes");
  corrupt(bytes.substr(0, 3), v.size(), "");  // truncated
}

TEST_CASE("periodic: any period round-trips any values, exceptions at run edges included") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t rows = 1 + rng() % 700, pattern = 1 + rng() % 40;
    std::vector<int64_t> v(rows);
    for (size_t i = 0; i < rows; ++i) {
      v[i] = i < pattern ? static_cast<int64_t>(rng()) : v[i - pattern];
      if (rng() % 7 == 0) v[i] = (rng() & 1) ? INT64_MIN : static_cast<int64_t>(rng() % 5);
    }
    CAPTURE(rows);
    const size_t period = 1 + rng() % rows;  // the encoder takes any period, good or not
    std::string bytes;
    encodePeriodic(v, period, &bytes);
    std::vector<int64_t> out{1, 2, 3};
    REQUIRE(decodePeriodic(bytes, rows, &out).isOk());
    CHECK(out == v);
    PeriodicChoice choice;
    if (!choosePeriod(v, &choice)) continue;
    bytes.clear();
    encodePeriodic(v, choice.period, &bytes);
    CHECK(bytes.size() == choice.bytes);
    REQUIRE(decodePeriodic(bytes, rows, &out).isOk());
    CHECK(out == v);
  }
}

TEST_CASE("the analysis pass codes a nested table's repeating rows as periodic") {
  // kernels.count over 232 steps of 4 kernels: the same counts each step but for one kernel
  // now and then; and a step of 5 rows where a kernel appeared once.
  std::mt19937_64 rng(3);
  std::vector<int64_t> counts;
  for (int step = 0; step < 232; ++step) {
    for (int k = 0; k < 4; ++k) counts.push_back(k == 1 ? 3 : (rng() % 40 == 0 ? 2 : 1));
    if (step == 100) counts.push_back(7);
  }
  const EncodedPayload p = encodeInts(counts, nullptr);
  CHECK(p.codec == static_cast<uint8_t>(CodecId::kPeriodic));
  CHECK(p.bytes.size() < 120);
  std::vector<int64_t> out;
  REQUIRE(decodeInts(p.codec, p.bytes, counts.size(), nullptr, &out).isOk());
  CHECK(out == counts);
}

TEST_CASE("the analysis pass bit-packs step times: large values in a narrow span") {
  std::mt19937_64 rng(3);
  std::vector<int64_t> iter(256);
  for (auto& x : iter) x = 48'000'000 + static_cast<int64_t>(rng() % 4'000'000);
  EncodedPayload p = encodeInts(iter, nullptr);
  CHECK(p.codec == static_cast<uint8_t>(CodecId::kBitPack));
  // 22 bits a value (the span is under 2^22) against 4 bytes a plain varint: 4 + 1 + 704 bytes.
  CHECK(p.bytes.size() == 709);
}

TEST_CASE("chunks of long varints (read a word at a time) decode every length; a bad tenth byte is Corruption") {
  // Mostly 10-byte values, so the chunk takes the long path, with every shorter length between.
  std::mt19937_64 rng(10);
  std::vector<int64_t> v;
  for (int i = 0; i < 300; ++i) {
    const int bits = i % 3 == 0 ? 1 + i % 63 : 63;
    v.push_back(static_cast<int64_t>(rng() >> (64 - bits)) * ((i & 1) ? -1 : 1));
  }
  v.push_back(INT64_MIN);
  v.push_back(INT64_MAX);
  std::string bytes;
  REQUIRE(encodeIntsWith(CodecId::kPlain, v, nullptr, &bytes));
  REQUIRE(bytes.size() >= 6 * v.size());
  std::vector<int64_t> out;
  REQUIRE(decodeInts(static_cast<uint8_t>(CodecId::kPlain), bytes, v.size(), nullptr, &out).isOk());
  CHECK(out == v);
  // INT64_MIN's zigzag is 2^64 - 1: ten bytes, the tenth 0x01. A tenth byte of 0x02 overflows.
  std::string bad = bytes;
  const size_t tenth = bytes.size() - 20 + 9;
  REQUIRE(static_cast<uint8_t>(bad[tenth]) == 0x01);
  bad[tenth] = 0x02;
  CHECK(decodeInts(static_cast<uint8_t>(CodecId::kPlain), bad, v.size(), nullptr, &out).isCorruption());
}

TEST_CASE("integer decoders turn random bytes into Corruption, never a crash") {
  std::mt19937_64 rng(7);
  RowContext g = modGroups(100, 5);
  int ok = 0, corrupt = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string bytes(rng() % 64, '\0');
    for (auto& c : bytes) c = static_cast<char>(rng());
    uint8_t codec = static_cast<uint8_t>(rng() % 20) | ((rng() & 1) ? kCodecZstdFlag : 0);
    size_t rows = rng() % 3 == 0 ? 100 : rng() % 8;
    std::vector<int64_t> out;
    Status s = decodeInts(codec, bytes, rows, (rng() & 1) ? &g : nullptr, &out);
    if (s.isOk()) {
      ++ok;
      CHECK(out.size() == rows);
    } else {
      ++corrupt;
      CHECK(s.isCorruption());
    }
  }
  CHECK(corrupt > 0);
  MESSAGE("random payloads: " << ok << " decoded, " << corrupt << " corruption");
}

TEST_CASE("zstd layer round-trips and rejects bad frames") {
  std::vector<int64_t> v(4096);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(i % 17);
  EncodedPayload p;
  p.codec = static_cast<uint8_t>(CodecId::kPlain);
  REQUIRE(encodeIntsWith(CodecId::kPlain, v, nullptr, &p.bytes));
  REQUIRE(applyZstdIfSmaller(&p));
  std::vector<int64_t> out;
  REQUIRE(decodeInts(p.codec, p.bytes, v.size(), nullptr, &out).isOk());
  CHECK(out == v);
  // Flip bytes in the frame: Corruption (or, rarely, a wrong-but-verified value count).
  for (size_t i = 1; i < p.bytes.size(); ++i) {
    std::string bad = p.bytes;
    bad[i] ^= 0x5a;
    Status s = decodeInts(p.codec, bad, v.size(), nullptr, &out);
    if (!s.isOk()) CHECK(s.isCorruption());
  }
  // The raw size is bounded before allocation.
  std::string huge;
  huge.push_back(static_cast<char>(0xff));
  huge.append("\xff\xff\xff\x0f", 4);
  CHECK(decodeInts(p.codec, huge, 4, nullptr, &out).isCorruption());
}

TEST_CASE("grouped codec without groups is Corruption") {
  std::vector<int64_t> v{1, 2, 3};
  RowContext g = modGroups(3, 2);
  std::string bytes;
  REQUIRE(encodeIntsWith(CodecId::kGroupDelta, v, &g, &bytes));
  std::vector<int64_t> out;
  CHECK(decodeInts(static_cast<uint8_t>(CodecId::kGroupDelta), bytes, 3, nullptr, &out).isCorruption());
  RowContext wrong = modGroups(2, 2);
  CHECK(decodeInts(static_cast<uint8_t>(CodecId::kGroupDelta), bytes, 3, &wrong, &out).isCorruption());
}

TEST_CASE("histogram codecs round-trip") {
  using model::DurationHistogram;
  std::mt19937_64 rng(3);
  std::vector<DurationHistogram> hists;
  const int kGroups = 64;
  std::vector<double> mean(kGroups);
  for (auto& m : mean) m = 1000.0 + static_cast<double>(rng() % 5'000'000);
  for (int step = 0; step < 64; ++step) {
    for (int k = 0; k < kGroups; ++k) {
      DurationHistogram h;
      std::normal_distribution<double> d(mean[k], mean[k] * 0.02);
      int launches = 1 + k % 20;
      for (int i = 0; i < launches; ++i) h.add(static_cast<int64_t>(d(rng)));
      hists.push_back(h);
    }
  }
  hists.push_back(DurationHistogram());  // empty
  DurationHistogram extreme;
  extreme.add(0);
  extreme.add(-5);
  extreme.add(INT64_MAX, 0xffffffffu);
  extreme.add(1);
  hists.push_back(extreme);
  // A histogram with a zero-count hole in the middle whose reference mode sits in the hole.
  DurationHistogram holed_ref, holed;
  holed_ref.add(1000, 9);
  holed_ref.add(1100, 1);
  holed_ref.add(900, 1);
  holed.add(1100, 2);
  holed.add(900, 3);
  hists.push_back(holed_ref);
  for (int i = 0; i < kGroups - 1; ++i) hists.push_back(DurationHistogram());
  hists.push_back(holed);
  RowContext g;
  for (size_t i = 0; i < hists.size(); ++i) g.ids.push_back(static_cast<uint32_t>(i % kGroups));
  g.count = kGroups;
  std::vector<int64_t> counts;
  for (const auto& h : hists) counts.push_back(static_cast<int64_t>(h.count()));
  // Window codec: with and without groups, with and without the implied count.
  for (int variant = 0; variant < 4; ++variant) {
    RowContext ctx;
    if (variant & 1) ctx = g;
    if (variant & 2) ctx.counts = counts;
    std::string bytes;
    REQUIRE(encodeHistsWith(CodecId::kHistWindow, hists, &ctx, &bytes));
    HistColumn out;
    Status s = decodeHists(static_cast<uint8_t>(CodecId::kHistWindow), bytes, hists.size(), &ctx, &out);
    REQUIRE_MESSAGE(s.isOk(), s.toString());
    CHECK(out == hists);
    MESSAGE("hist-window variant " << variant << ": " << bytes.size() << " bytes");
    // A window of wanted rows: those decode as in full (each against references the rows
    // before it only chained through), the others stay empty.
    const size_t n = hists.size();
    for (auto [begin, end] : {std::pair<size_t, size_t>{1, 4000}, {2000, 2001}, {n - 70, n}, {n - 1, n}, {0, 0}}) {
      RowContext windowed = ctx;
      windowed.wanted_begin = begin;
      windowed.wanted_end = end;
      HistColumn part;
      Status sw = decodeHists(static_cast<uint8_t>(CodecId::kHistWindow), bytes, n, &windowed, &part);
      REQUIRE_MESSAGE(sw.isOk(), sw.toString());
      REQUIRE(part.size() == n);
      for (size_t i = 0; i < n; ++i) {
        INFO("window [" << begin << ", " << end << ") row " << i);
        CHECK(part[i] == (i >= begin && i < end ? hists[i] : DurationHistogram()));
      }
    }
    if (variant & 2) {
      // A count column that disagrees with the histograms is caught, not decoded silently.
      RowContext wrong = ctx;
      std::vector<int64_t> bad = counts;
      bad[5] += 1000;
      wrong.counts = bad;
      HistColumn out2;
      Status s2 = decodeHists(static_cast<uint8_t>(CodecId::kHistWindow), bytes, hists.size(), &wrong, &out2);
      if (s2.isOk()) CHECK(out2 != hists);
      RowContext none;
      CHECK(decodeHists(static_cast<uint8_t>(CodecId::kHistWindow), bytes, hists.size(), &none, &out2).isCorruption());
    }
  }
  // Counts that disagree with the histograms: the encoder must not imply anything.
  {
    RowContext ctx = g;
    std::vector<int64_t> bad = counts;
    bad[0] += 1;
    ctx.counts = bad;
    std::string bytes;
    REQUIRE(encodeHistsWith(CodecId::kHistWindow, hists, &ctx, &bytes));
    HistColumn out;
    REQUIRE(decodeHists(static_cast<uint8_t>(CodecId::kHistWindow), bytes, hists.size(), &ctx, &out).isOk());
    CHECK(out == hists);
  }
  for (CodecId c : {CodecId::kHistSparse, CodecId::kHistSparseGrouped}) {
    std::string bytes;
    REQUIRE(encodeHistsWith(c, hists, &g, &bytes));
    HistColumn out;
    Status s = decodeHists(static_cast<uint8_t>(c), bytes, hists.size(), &g, &out);
    REQUIRE_MESSAGE(s.isOk(), s.toString());
    CHECK(out == hists);
  }
  EncodedPayload best = encodeHists(hists, &g);
  HistColumn out;
  REQUIRE(decodeHists(best.codec, best.bytes, hists.size(), &g, &out).isOk());
  CHECK(out == hists);
  MESSAGE("histograms: " << hists.size() << " rows -> " << best.bytes.size() << " bytes with " << std::string(codecName(best.codec)));
}

TEST_CASE("histogram decoder turns random bytes into Corruption") {
  std::mt19937_64 rng(11);
  RowContext g;
  for (int i = 0; i < 16; ++i) g.ids.push_back(static_cast<uint32_t>(i % 4));
  g.count = 4;
  std::vector<int64_t> counts(16, 3);
  g.counts = counts;
  for (int trial = 0; trial < 30000; ++trial) {
    std::string bytes(rng() % 64, '\0');
    for (auto& c : bytes) c = static_cast<char>(rng() % 4 == 0 ? 0 : rng() % 3 == 0 ? rng() % 4 : rng());
    uint8_t codec = static_cast<uint8_t>(16 + rng() % 3) | ((rng() % 8 == 0) ? kCodecZstdFlag : 0);
    HistColumn out;
    Status s = decodeHists(codec, bytes, rng() % 2 ? 16 : rng() % 4, &g, &out);
    if (!s.isOk()) CHECK(s.isCorruption());
  }
}

TEST_CASE("histogram decoders: a delta that overflows int64 against its base is Corruption") {
  // Two rows of one group; row 1 codes its width (hist-window) or bucket count (hist-sparse)
  // against row 0 with a delta of INT64_MAX: zigzag 2^64 - 2, ten varint bytes.
  const std::string huge("\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10);
  RowContext g;
  g.ids = {0, 0};
  g.count = 1;
  auto stream = [](const std::string& raw) { return std::string(1, static_cast<char>(raw.size())) + static_cast<char>(raw.size()) + raw; };
  // hist-window, grouped: row 0 is bucket 5 (width 1) with count 3.
  std::string window = std::string(1, '\x01') + stream("\x02" + huge) + stream("\x0a") + stream("\x03");
  // hist-sparse-grouped: stream lengths A, B, C, then A (buckets per row), B (first index),
  // C (gaps, none), D (counts): row 0 is one bucket, index 5, count 3.
  std::string sparse = std::string(1, static_cast<char>(1 + huge.size())) + '\x01' + '\x00' + "\x02" + huge + "\x0a" + "\x06";
  // The overflow is caught without undefined behaviour, and no wrapped value reaches the
  // message (hist-window names the sum's terms).
  for (auto [codec, bytes, message] : {std::tuple{CodecId::kHistWindow, window, "hist-window: row 1 window width 1 + 9223372036854775807 out of range [0, 2185]"},
                                       std::tuple{CodecId::kHistSparseGrouped, sparse, "hist-sparse: buckets in a row out of range"}}) {
    HistColumn out;
    Status s = decodeHists(static_cast<uint8_t>(codec), bytes, 2, &g, &out);
    INFO(codecName(static_cast<uint8_t>(codec)) << ": " << s.toString());
    CHECK(s.isCorruption());
    CHECK(s.message() == message);
  }
}

TEST_CASE("hist-window: a truncated varint names its stream and row; a bucket count past 2^32-1 or a window out of range is Corruption") {
  auto stream = [](const std::string& raw) { return std::string(1, static_cast<char>(raw.size())) + static_cast<char>(raw.size()) + raw; };
  // One ungrouped row (flags 0): width 1 (zigzag 0x02) at bucket 5 (0x0a), then its count.
  auto window = [&](const std::string& a, const std::string& d) { return std::string(1, '\x00') + stream(a) + stream("\x0a") + stream(d); };
  const uint8_t codec = static_cast<uint8_t>(CodecId::kHistWindow);
  HistColumn out;
  REQUIRE(decodeHists(codec, window("\x02", "\x03"), 1, nullptr, &out).isOk());
  CHECK(out[0].count() == 3);
  for (auto [bytes, message] : {std::pair{window("\x02", "\x83"), "hist-window stream D: truncated or overlong varint at row 0"},
                                std::pair{window("\x82", "\x03"), "hist-window stream A: truncated or overlong varint at row 0"},
                                std::pair{window("\x02", std::string("\x80\x80\x80\x80\x10", 5)), "hist-window: bucket count 4294967296 above 2^32-1"},
                                // width 3000 (zigzag 6000); first bucket -1 (zigzag 1)
                                std::pair{window("\xf0\x2e", "\x03"), "hist-window: row 0 window width 3000 out of range [0, 2185]"},
                                std::pair{std::string(1, '\x00') + stream("\x02") + stream("\x01") + stream("\x03"),
                                          "hist-window: row 0 first bucket -1 out of range [0, 2184]"}}) {
    Status s = decodeHists(codec, bytes, 1, nullptr, &out);
    INFO(s.toString());
    CHECK(s.isCorruption());
    CHECK(s.message().find(message) != std::string::npos);
  }
}

TEST_CASE("hist-window: implied counts out of range and damage before the wanted rows are Corruption") {
  auto stream = [](const std::string& raw) { return std::string(1, static_cast<char>(raw.size())) + static_cast<char>(raw.size()) + raw; };
  const uint8_t codec = static_cast<uint8_t>(CodecId::kHistWindow);
  HistColumn out;
  // One row (flags 2: implied), width 1 at bucket 5: its one count is the row's total.
  const std::string one = std::string(1, '\x02') + stream("\x02") + stream("\x0a") + stream("");
  for (auto [total, message] : {std::pair<int64_t, const char*>{0, "window edge with a zero count"},
                                {-1, "implied count out of range"},
                                {int64_t{1} << 32, "implied count out of range"}}) {
    std::vector<int64_t> counts{total};
    RowContext ctx;
    ctx.counts = counts;
    Status s = decodeHists(codec, one, 1, &ctx, &out);
    INFO(s.toString());
    CHECK(s.isCorruption());
    CHECK(s.message().find(message) != std::string::npos);
  }
  {
    std::vector<int64_t> counts{7};
    RowContext ctx;
    ctx.counts = counts;
    REQUIRE(decodeHists(codec, one, 1, &ctx, &out).isOk());
    CHECK(out[0].count() == 7);
  }
  // Two ungrouped rows, the second wanted: a truncated count in the first (decoded only to
  // chain through) is still caught, as is a zero window edge there.
  const std::string two = std::string(1, '\x00') + stream("\x02\x02") + stream("\x0a\x0a");
  for (auto [d, message] : {std::pair<std::string, const char*>{"\x83", "stream D: truncated or overlong varint at row 0"},
                            {std::string("\x00\x03", 2), "window edge with a zero count"}}) {
    RowContext ctx;
    ctx.wanted_begin = 1;
    ctx.wanted_end = 2;
    Status s = decodeHists(codec, two + stream(d), 2, &ctx, &out);
    INFO(s.toString());
    CHECK(s.isCorruption());
    CHECK(s.message().find(message) != std::string::npos);
  }
}

TEST_CASE("hist-window: a chunk of more rows than a segment is cut into segments, and a wanted range reads only its own") {
  using model::DurationHistogram;
  const uint8_t codec = static_cast<uint8_t>(CodecId::kHistWindow);
  // 4 groups (a segment holds 128 steps' rows, 512), 300 steps: segments of 512 rows and a
  // last one of 176.
  const uint32_t kGroups = 4;
  REQUIRE(histWindowSegmentRows(kGroups) == 512);
  std::mt19937_64 rng(5);
  std::vector<DurationHistogram> hists;
  RowContext ctx;
  ctx.count = kGroups;
  for (int step = 0; step < 300; ++step) {
    for (uint32_t k = 0; k < kGroups; ++k) {
      DurationHistogram h;
      std::normal_distribution<double> d(1000.0 * (k + 1), 30.0 * (k + 1));
      for (int i = 0; i < 1 + step % 7; ++i) h.add(static_cast<int64_t>(d(rng)));
      if (step % 50 == 0 && k == 1) h = DurationHistogram();  // an empty row inside a group
      hists.push_back(h);
      ctx.ids.push_back(k);
    }
  }
  std::vector<int64_t> counts;
  for (const auto& h : hists) counts.push_back(static_cast<int64_t>(h.count()));
  ctx.counts = counts;
  const size_t n = hists.size();

  std::string bytes;
  REQUIRE(encodeHistsWith(CodecId::kHistWindow, hists, &ctx, &bytes));
  CHECK((bytes[0] & 4) != 0);  // segmented
  std::string one_segment;
  REQUIRE(encodeHistWindow(std::span(hists).first(histWindowSegmentRows(0)), nullptr, &one_segment));
  CHECK((one_segment[0] & 12) == 12);  // packed deltas: one segment
  // Every range, within a segment, across boundaries, or none: those rows decode as in
  // full (the references restart at each segment), the others stay empty.
  for (auto [begin, end] : {std::pair<size_t, size_t>{0, n}, {511, 513}, {512, 1024}, {300, 301}, {700, n}, {1024, n}, {n - 1, n}, {0, 0}, {512, 512}}) {
    RowContext windowed = ctx;
    windowed.wanted_begin = begin;
    windowed.wanted_end = end;
    HistColumn part;
    Status s = decodeHists(codec, bytes, n, &windowed, &part);
    REQUIRE_MESSAGE(s.isOk(), s.toString());
    REQUIRE(part.size() == n);
    for (size_t i = 0; i < n; ++i) {
      INFO("window [" << begin << ", " << end << ") row " << i);
      CHECK(part[i] == (i >= begin && i < end ? hists[i] : DurationHistogram()));
    }
  }

  // By hand, ungrouped (flags 4: segments only): two segments of one row each, bucket 5 and
  // bucket 6. Segment 0's count is a truncated varint. A segment: its rows, the length of
  // stream A, A and B in one stream, then D.
  auto stream = [](const std::string& raw) { return std::string(1, static_cast<char>(raw.size())) + static_cast<char>(raw.size()) + raw; };
  auto segment = [&](const std::string& rows, const std::string& first, const std::string& d) { return rows + '\x01' + stream("\x02" + first) + stream(d); };
  const std::string damaged_first = "\x04\x02" + segment("\x01", "\x0a", "\x83") + segment("\x01", "\x0c", "\x05");
  {
    RowContext second;  // only row 1: segment 0 is not read, so its damage goes unseen
    second.wanted_begin = 1;
    second.wanted_end = 2;
    HistColumn out;
    Status s = decodeHists(codec, damaged_first, 2, &second, &out);
    REQUIRE_MESSAGE(s.isOk(), s.toString());
    CHECK(out[0] == DurationHistogram());
    REQUIRE(out[1].buckets().size() == 1);
    CHECK(out[1].buckets()[0].index == 6);
    CHECK(out[1].buckets()[0].count == 5);
  }
  const std::string ok_first = segment("\x01", "\x0a", "\x03");
  for (auto [payload, message] : {
           std::pair<std::string, const char*>{damaged_first, "hist-window stream D: truncated or overlong varint at row 0"},
           {"\x04\x03" + ok_first + ok_first + ok_first, "segment count"},  // 3 segments of 2 rows
           {"\x04\x02" + segment(std::string(1, '\0'), "\x0a", "\x03") + ok_first, "segment 0 holds no rows"},
           {"\x04\x01" + ok_first, "segments hold 1 of 2 rows"},
           {"\x04\x02" + ok_first + segment("\x02", "\x0a", "\x03"), "segment rows"},  // past the rows left
           {"\x04\x02" + ok_first + ok_first + std::string(1, '\0'), "hist-window: trailing bytes"},
           {"\x04\x01\x02\x05" + stream("\x02\x02") + stream("\x03\x03"), "segment 0 stream A (5 bytes) longer than streams A and B (2)"},
           {"\x10\x01" + ok_first, "unknown flags 16"},
           {"\x08\x01" + ok_first, "packed deltas without segments"},
       }) {
    HistColumn out;
    Status s = decodeHists(codec, payload, 2, nullptr, &out);
    INFO(s.toString());
    CHECK(s.isCorruption());
    CHECK(s.message().find(message) != std::string::npos);
  }
  // A segment that is skipped, not inflated, still has its lengths checked: a raw length
  // past the segment's bound, a stored length past the payload.
  const std::string second_ok = segment("\x01", "\x0c", "\x05");
  for (auto [skipped, message] : {std::pair<std::string, const char*>{std::string("\x01\x01\x7f\x02\x02\x0a") + stream("\x03"), "stream raw length"},
                                  {std::string("\x01\x01\x02\x40\x02\x0a") + stream("\x03"), "stream stored length"}}) {
    RowContext second;
    second.wanted_begin = 1;
    second.wanted_end = 2;
    HistColumn out;
    Status s = decodeHists(codec, "\x04\x02" + skipped + second_ok, 2, &second, &out);
    INFO(s.toString());
    CHECK(s.isCorruption());
    CHECK(s.message().find(message) != std::string::npos);
  }
}
