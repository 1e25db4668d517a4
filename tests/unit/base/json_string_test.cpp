#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <random>
#include <string>

#include "base/json_string.h"

using argus::appendJsonString;
using Json = nlohmann::json;

namespace {

std::string asJson(std::string_view s) {
  std::string out;
  appendJsonString(&out, s);
  return out;
}

const std::string kReplacement = "\xef\xbf\xbd";

}  // namespace

TEST_CASE("escapes quotes, backslashes and control characters") {
  CHECK(asJson("a\"b\\c\n\r\td") == R"("a\"b\\c\n\r\td")");
  CHECK(asJson(std::string("\x01\x1f\0", 3)) == R"("\u0001\u001f\u0000")");
  CHECK(asJson("") == R"("")");
}

TEST_CASE("well-formed UTF-8 passes through unchanged") {
  for (std::string s : {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xed\x9f\xbf", "\xf4\x8f\xbf\xbf"}) {
    CAPTURE(s);
    CHECK(asJson(s) == "\"" + s + "\"");
    CHECK(Json::parse(asJson(s)).get<std::string>() == s);
  }
}

TEST_CASE("each byte that is not well-formed UTF-8 becomes U+FFFD") {
  const std::pair<std::string, std::string> cases[] = {
      {"d\x80", "d" + kReplacement},                                    // lone continuation byte
      {"\xc0\xaf", kReplacement + kReplacement},                        // overlong '/'
      {"\xe0\x80\xaf", kReplacement + kReplacement + kReplacement},     // overlong, 3 bytes
      {"\xed\xa0\x80", kReplacement + kReplacement + kReplacement},     // UTF-16 surrogate
      {"\xf4\x90\x80\x80", kReplacement + kReplacement + kReplacement + kReplacement},  // past U+10FFFF
      {"\xf5\x80", kReplacement + kReplacement},                        // never a lead byte
      {"\xe2\x82", kReplacement + kReplacement},                        // truncated at the end
      {"\xc3(", kReplacement + "("},                                    // bad continuation
  };
  for (const auto& [in, want] : cases) {
    CAPTURE(in);
    CHECK(asJson(in) == "\"" + want + "\"");
  }
}

TEST_CASE("random bytes always make a string a strict JSON parser reads") {
  std::mt19937 rng(11);
  for (int round = 0; round < 20000; ++round) {
    std::string s(rng() % 12, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    const std::string out = asJson(s);
    CAPTURE(out);
    Json parsed = Json::parse(out, nullptr, /*allow_exceptions=*/false);
    REQUIRE(parsed.is_string());
  }
}
