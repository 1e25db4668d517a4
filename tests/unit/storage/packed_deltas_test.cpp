// hist-window's packed deltas (docs/format/codecs.md#packed-deltas): round trips through the
// chunk codec for shapes that need exceptions, many groups and empty rows; the choice
// between packed and zstd'ed varint deltas; hand-built streams that must be Corruption.
#include <doctest/doctest.h>

#include <random>

#include "storage/hist_codec.h"
#include "storage/packed_deltas.h"

using namespace argus;
using namespace argus::storage;
using model::DurationHistogram;

namespace {

constexpr uint8_t kCodec = static_cast<uint8_t>(CodecId::kHistWindow);

// A histogram of `count` launches spread over `width` buckets from `first` (fewer buckets
// when there are fewer launches).
DurationHistogram window(int32_t first, int32_t width, uint32_t count) {
  width = std::min<int32_t>(width, static_cast<int32_t>(count));
  std::vector<DurationHistogram::Bucket> b;
  uint32_t left = count;
  for (int32_t i = 0; i < width; ++i) {
    const uint32_t c = i + 1 == width ? left : count / static_cast<uint32_t>(width);
    b.push_back({first + i, c});
    left -= c;
  }
  DurationHistogram h;
  REQUIRE(h.assign(b).isOk());
  return h;
}

struct Chunk {
  std::vector<DurationHistogram> hists;
  std::vector<int64_t> counts;
  RowContext ctx;
};

// rows x groups histograms: each group drifts by small steps, with a jump of `jump`
// buckets every 37 rows and an empty row every 53 (exceptions and resets of the reference).
Chunk drifting(size_t steps, uint32_t groups, int32_t jump, uint64_t seed) {
  Chunk c;
  std::mt19937_64 rng(seed);
  std::vector<int32_t> first(groups), width(groups);
  for (uint32_t g = 0; g < groups; ++g) {
    first[g] = 100 + static_cast<int32_t>(g * 7 % 1500);
    width[g] = 1 + static_cast<int32_t>(g % 3);
  }
  for (size_t s = 0; s < steps; ++s) {
    for (uint32_t g = 0; g < groups; ++g) {
      const size_t row = c.hists.size();
      first[g] = std::clamp(first[g] + static_cast<int32_t>(rng() % 5) - 2 + (row % 37 == 36 ? jump : 0), 0, 2000);
      if (g % 4 == 1) width[g] = std::clamp(width[g] + static_cast<int32_t>(rng() % 3) - 1, 1, 9);
      c.hists.push_back(row % 53 == 52 ? DurationHistogram() : window(first[g], width[g], 1 + static_cast<uint32_t>(rng() % 40)));
      c.ctx.ids.push_back(g);
    }
  }
  for (const auto& h : c.hists) c.counts.push_back(static_cast<int64_t>(h.count()));
  c.ctx.counts = c.counts;
  c.ctx.count = groups;
  return c;
}

void requireRoundTrip(const Chunk& c, const RowContext* ctx, size_t begin, size_t end, const std::string& bytes) {
  RowContext wanted = ctx != nullptr ? *ctx : RowContext();
  wanted.wanted_begin = begin;
  wanted.wanted_end = end;
  HistColumn out;
  Status s = decodeHists(kCodec, bytes, c.hists.size(), &wanted, &out);
  REQUIRE_MESSAGE(s.isOk(), s.toString());
  for (size_t i = 0; i < c.hists.size(); ++i) {
    INFO("row " << i << " of [" << begin << ", " << end << ")");
    CHECK(out[i] == (i >= begin && i < end ? c.hists[i] : DurationHistogram()));
  }
}

}  // namespace

TEST_CASE("packed deltas: kernel-like histograms round-trip, whole and by row ranges, grouped or not") {
  for (auto [groups, jump] : {std::pair<uint32_t, int32_t>{4, 0}, {4, 900}, {64, 40}, {300, 3}, {1, 1500}}) {
    CAPTURE(groups);
    CAPTURE(jump);
    Chunk c = drifting(groups > 64 ? 20 : 300, groups, jump, groups * 31 + static_cast<uint64_t>(jump));
    const size_t n = c.hists.size();
    for (const RowContext* ctx : {static_cast<const RowContext*>(&c.ctx), static_cast<const RowContext*>(nullptr)}) {
      std::string bytes;
      REQUIRE(encodeHistWindow(c.hists, ctx, &bytes));
      // Grouped, the deltas are small and packed wins; ungrouped, each row is coded against
      // the row before (another kernel) and either form may.
      if (ctx != nullptr) CHECK((bytes[0] & (kHistWindowPacked | kHistWindowSegments)) == (kHistWindowPacked | kHistWindowSegments));
      for (auto [begin, end] : {std::pair<size_t, size_t>{0, n}, {n / 3, n / 2}, {n - 1, n}, {0, 1}, {n / 2, n / 2}}) requireRoundTrip(c, ctx, begin, end, bytes);
    }
  }
}

TEST_CASE("packed deltas: smaller than zstd'ed varints on drifting kernels; varints kept where zstd wins by far") {
  Chunk c = drifting(128, 4, 0, 7);
  std::string packed, varints;
  REQUIRE(encodeHistWindow(c.hists, &c.ctx, &packed));
  REQUIRE((packed[0] & kHistWindowPacked) != 0);
  MESSAGE("4 groups x 128 steps: " << packed.size() << " bytes packed");

  // One group jumping 600 buckets up and back every row: 11 bits a row packed, a repeat
  // that zstd codes in a few bytes.
  Chunk jumpy;
  for (int i = 0; i < 600; ++i) {
    jumpy.hists.push_back(window(i % 2 == 0 ? 100 : 700, 1, 3));
    jumpy.ctx.ids.push_back(0);
  }
  jumpy.ctx.count = 1;
  jumpy.counts.assign(jumpy.hists.size(), 3);
  jumpy.ctx.counts = jumpy.counts;  // implied: stream D is empty, the deltas are all there is
  REQUIRE(encodeHistWindow(jumpy.hists, &jumpy.ctx, &varints));
  CHECK((varints[0] & kHistWindowPacked) == 0);
  requireRoundTrip(jumpy, &jumpy.ctx, 0, jumpy.hists.size(), varints);
}

TEST_CASE("packed deltas: hand-built streams; every fault is Corruption naming what it was reading") {
  // Ungrouped, one segment of one row: width 1 (A = zz 1 = 2, 2 bits), first bucket 5
  // (B = zz 5 = 10, 4 bits): head byte 0x24, bits 2 | 10 << 2 = 0x2a. Stream D: count 3.
  auto stream = [](const std::string& raw) { return std::string(1, static_cast<char>(raw.size())) + static_cast<char>(raw.size()) + raw; };
  auto chunk = [&](const std::string& packed) { return "\x0c\x01\x01" + std::string(1, static_cast<char>(packed.size())) + packed + stream("\x03"); };
  {
    HistColumn out;
    Status s = decodeHists(kCodec, chunk(std::string("\x01\x24\x01\x2a", 4)), 1, nullptr, &out);
    REQUIRE_MESSAGE(s.isOk(), s.toString());
    REQUIRE(out[0].buckets().size() == 1);
    CHECK(out[0].buckets()[0].index == 5);
    CHECK(out[0].buckets()[0].count == 3);
    // B at its mask (15) takes an exception: 15 + 2 = 17 = zz(-9), from 0: out of range.
    Status neg = decodeHists(kCodec, chunk(std::string("\x01\x24\x01\x3e\x02", 5)), 1, nullptr, &out);
    CHECK(neg.isCorruption());
    CHECK(neg.message().find("first bucket -9 out of range") != std::string::npos);
    // 15 + 1 = 16 = zz(8): bucket 8.
    REQUIRE(decodeHists(kCodec, chunk(std::string("\x01\x24\x01\x3e\x01", 5)), 1, nullptr, &out).isOk());
    CHECK(out[0].buckets()[0].index == 8);
  }
  for (auto [packed, message] : {
           std::pair<std::string, const char*>{std::string("\x00\x01\x2a", 3), "window width of row 0 past"},      // no group's widths listed
           {std::string("\x01\x24\x00", 3), "window width of row 0 past"},                                          // no bits
           {std::string("\x01\x24\x01\x3e", 4), "first bucket of row 0 past"},                                      // exception missing
           {std::string("\x01\x24\x01\x2a\x00", 5), "trailing bytes in a stream"},                                  // exception left over
           {std::string("\x01\x24\x02\x2a\x00", 5), "trailing bytes in a stream"},                                  // a byte of bits left over
           {std::string("\x02\x24\x24\x01\x2a", 5), "group count"},                                                 // more groups than the chunk has
           {std::string("\x01\x24\x05\x2a", 4), "packed bytes"},                                                    // bits past the stream
           {std::string("\x01\x24\x01\x3e\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 14), "first bucket of row 0 past"},  // 15 + excess past 2^64
       }) {
    HistColumn out;
    Status s = decodeHists(kCodec, chunk(packed), 1, nullptr, &out);
    INFO(s.toString());
    CHECK(s.isCorruption());
    CHECK(s.message().find(message) != std::string::npos);
  }
}

TEST_CASE("packed deltas: a sealer's hint keeps the form it chose for the next chunks of the column") {
  Chunk c = drifting(300, 4, 0, 11);
  CodecHint hint;
  EncodedPayload first = encodeHists(c.hists, &c.ctx, &hint);
  REQUIRE(first.codec == static_cast<uint8_t>(CodecId::kHistWindow));
  REQUIRE((first.bytes[0] & kHistWindowPacked) != 0);
  CHECK(hint.variant == static_cast<uint8_t>(HistDeltaForm::kPacked));
  CHECK(hint.reuse_left == kCodecHintReuse);
  // Told varints, a chunk is written as varints (and still decodes) while the hint lasts.
  hint.variant = static_cast<uint8_t>(HistDeltaForm::kVarints);
  EncodedPayload next = encodeHists(c.hists, &c.ctx, &hint);
  CHECK((next.bytes[0] & kHistWindowPacked) == 0);
  CHECK(hint.reuse_left == kCodecHintReuse - 1);
  requireRoundTrip(c, &c.ctx, 0, c.hists.size(), next.bytes);
  std::string only_packed;
  HistDeltaForm chosen = HistDeltaForm::kEither;
  REQUIRE(encodeHistWindow(c.hists, &c.ctx, &only_packed, HistDeltaForm::kPacked, &chosen));
  CHECK(chosen == HistDeltaForm::kPacked);
  CHECK(only_packed == first.bytes);
}

TEST_CASE("packed deltas: every truncation and random damage of a packed chunk decodes or is Corruption") {
  Chunk c = drifting(40, 4, 900, 13);  // jumps: exceptions in the stream
  std::string bytes;
  REQUIRE(encodeHistWindow(c.hists, &c.ctx, &bytes));
  REQUIRE((bytes[0] & kHistWindowPacked) != 0);
  const size_t n = c.hists.size();
  auto decodes = [&](const std::string& payload, size_t begin, size_t end) {
    RowContext wanted = c.ctx;
    wanted.wanted_begin = begin;
    wanted.wanted_end = end;
    HistColumn out;
    Status s = decodeHists(kCodec, payload, n, &wanted, &out);
    if (!s.isOk()) CHECK_MESSAGE(s.isCorruption(), s.toString());
    return s.isOk();
  };
  for (size_t len = 0; len < bytes.size(); ++len) CHECK_FALSE(decodes(bytes.substr(0, len), 0, n));
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string damaged = bytes;
    for (int k = 0; k < 1 + trial % 4; ++k) damaged[rng() % damaged.size()] ^= static_cast<char>(1 + rng() % 255);
    const size_t begin = rng() % (n + 1);
    decodes(damaged, begin, begin + rng() % (n + 1 - begin));
  }
}

TEST_CASE("packed deltas: a column decoded into again holds only the new chunk's wanted rows") {
  // A scan reuses one column per thread: rows a narrower range or an empty histogram does not
  // write must not keep the buckets of the chunk before.
  Chunk full = drifting(40, 4, 0, 19);
  Chunk sparse = drifting(40, 4, 0, 23);
  for (size_t i = 0; i < sparse.hists.size(); i += 3) sparse.hists[i] = DurationHistogram();
  for (size_t i = 0; i < sparse.hists.size(); ++i) sparse.counts[i] = static_cast<int64_t>(sparse.hists[i].count());
  sparse.ctx.counts = sparse.counts;
  std::string a, b;
  REQUIRE(encodeHistWindow(full.hists, &full.ctx, &a));
  REQUIRE(encodeHistWindow(sparse.hists, &sparse.ctx, &b));
  HistColumn out;
  REQUIRE(decodeHists(kCodec, a, full.hists.size(), &full.ctx, &out).isOk());
  const size_t n = sparse.hists.size();
  RowContext wanted = sparse.ctx;
  wanted.wanted_begin = n / 4;
  wanted.wanted_end = n / 2;
  REQUIRE(decodeHists(kCodec, b, n, &wanted, &out).isOk());
  REQUIRE(out.size() == n);
  for (size_t i = 0; i < n; ++i) {
    INFO("row " << i);
    CHECK(out[i] == (i >= n / 4 && i < n / 2 ? sparse.hists[i] : DurationHistogram()));
  }
}
