#include <doctest/doctest.h>

#include "import/kineto_time.h"

using argus::import::microsTextToNs;

TEST_CASE("microsecond text converts to exact nanoseconds") {
  CHECK(microsTextToNs("0") == 0);
  CHECK(microsTextToNs("1694128201426674") == int64_t{1694128201426674000});
  // 1.6e15 us with a fraction: a double would be off by hundreds of ns.
  CHECK(microsTextToNs("1682725898079292.123") == int64_t{1682725898079292123});
  CHECK(microsTextToNs("4458676416788.066") == int64_t{4458676416788066});
  CHECK(microsTextToNs("607312.0") == 607312000);
  CHECK(microsTextToNs("2.08") == 2080);
  CHECK(microsTextToNs("-3.5") == -3500);
  CHECK(microsTextToNs("1.5e3") == 1500000);
  CHECK(microsTextToNs("2E-3") == 2);
}

TEST_CASE("digits below the nanosecond round half away from zero") {
  CHECK(microsTextToNs("0.0004") == 0);
  CHECK(microsTextToNs("0.0005") == 1);
  CHECK(microsTextToNs("1.2344999") == 1234);
  CHECK(microsTextToNs("1.2345") == 1235);
  CHECK(microsTextToNs("-1.2345") == -1235);
  CHECK(microsTextToNs("1e-9") == 0);
}

TEST_CASE("non-numbers and overflow are refused") {
  CHECK_FALSE(microsTextToNs(""));
  CHECK_FALSE(microsTextToNs("abc"));
  CHECK_FALSE(microsTextToNs("1.2.3"));
  CHECK_FALSE(microsTextToNs("1e"));
  CHECK_FALSE(microsTextToNs("12x"));
  CHECK_FALSE(microsTextToNs("9223372036854775807"));  // * 1000 overflows
  CHECK_FALSE(microsTextToNs("1e400"));
  CHECK(microsTextToNs("9223372036854775.807") == INT64_MAX);
  CHECK(microsTextToNs("-9223372036854775.808") == INT64_MIN);
}
