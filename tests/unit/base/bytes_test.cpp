#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

#include "base/bytes.h"

using argus::ByteReader;
using argus::ByteWriter;

TEST_CASE("varints round-trip at every width and sign") {
  std::vector<uint64_t> values = {0, 1, 127, 128, 16383, 16384, (1ull << 32) - 1, 1ull << 32,
                                  std::numeric_limits<uint64_t>::max()};
  std::mt19937_64 rng(7);
  for (int i = 0; i < 10000; ++i) values.push_back(rng() >> (rng() % 64));
  std::string buf;
  ByteWriter w(&buf);
  for (uint64_t v : values) {
    w.putVarint(v);
    w.putSignedVarint(static_cast<int64_t>(v));
  }
  ByteReader r(buf, "test");
  for (uint64_t v : values) {
    uint64_t u;
    int64_t s;
    REQUIRE(r.getVarint(&u).isOk());
    REQUIRE(r.getSignedVarint(&s).isOk());
    CHECK(u == v);
    CHECK(s == static_cast<int64_t>(v));
  }
  CHECK(r.atEnd());
}

TEST_CASE("zigzag keeps small magnitudes small") {
  CHECK(argus::zigzagEncode(0) == 0);
  CHECK(argus::zigzagEncode(-1) == 1);
  CHECK(argus::zigzagEncode(1) == 2);
  CHECK(argus::zigzagDecode(argus::zigzagEncode(std::numeric_limits<int64_t>::min())) ==
        std::numeric_limits<int64_t>::min());
}

TEST_CASE("big-endian fixed integers sort bytewise in numeric order") {
  std::string a, b;
  ByteWriter(&a).putFixedBE(255, 8);
  ByteWriter(&b).putFixedBE(256, 8);
  CHECK(a < b);
  uint64_t v;
  ByteReader r(b);
  REQUIRE(r.getFixedBE(&v, 8).isOk());
  CHECK(v == 256);
}

TEST_CASE("big-endian fixed integers of every width: most significant byte first, read back, higher bytes dropped") {
  std::mt19937_64 rng(3);
  for (int bytes = 1; bytes <= 8; ++bytes) {
    for (int i = 0; i < 200; ++i) {
      const uint64_t v = i == 0 ? ~uint64_t{0} : rng();
      const uint64_t low = bytes == 8 ? v : v & ((uint64_t{1} << (8 * bytes)) - 1);
      char buf[9] = {};
      buf[bytes] = 'x';
      CHECK(argus::putFixedBEAt(buf, v, bytes) == buf + bytes);
      CHECK(buf[bytes] == 'x');  // nothing written past the width
      for (int k = 0; k < bytes; ++k) CHECK(static_cast<uint8_t>(buf[k]) == static_cast<uint8_t>(low >> (8 * (bytes - 1 - k))));
      CHECK(argus::getFixedBEAt(buf, bytes) == low);
    }
  }
}

TEST_CASE("reader reports truncation and overlong varints as corruption, never overruns") {
  std::string buf = "\x80\x80";
  ByteReader r(buf, "frame");
  uint64_t v;
  argus::Status s = r.getVarint(&v);
  CHECK(s.isCorruption());
  CHECK(s.message().find("frame: truncated") != std::string::npos);

  std::string overlong(11, '\xff');
  ByteReader r2(overlong, "x");
  CHECK(r2.getVarint(&v).isCorruption());

  std::string len_too_big;
  ByteWriter(&len_too_big).putVarint(1000);
  ByteReader r3(len_too_big, "x");
  std::string_view sv;
  CHECK(r3.getString(&sv).isCorruption());

  std::mt19937 rng(3);
  for (int i = 0; i < 2000; ++i) {
    std::string junk(rng() % 16, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    ByteReader jr(junk);
    while (!jr.atEnd()) {
      if (!jr.getVarint(&v).isOk()) break;
    }
  }
}

TEST_CASE("doubles keep their bits: NaN, infinities and negative zero") {
  std::string buf;
  ByteWriter w(&buf);
  const double values[] = {std::nan(""), INFINITY, -INFINITY, -0.0, 1e-300};
  for (double d : values) w.putDouble(d);
  ByteReader r(buf);
  for (double d : values) {
    double got;
    REQUIRE(r.getDouble(&got).isOk());
    CHECK(std::memcmp(&got, &d, sizeof d) == 0);
  }
}
