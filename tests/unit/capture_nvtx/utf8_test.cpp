// UTF-8 cutting and UTF-32 -> UTF-8 conversion of NVTX messages (capture/nvtx/utf8.h).
#include "capture/nvtx/utf8.h"

#include <doctest/doctest.h>

#include <string>

using namespace argus::capture::nvtx;

namespace {

std::string convert(const std::wstring& w, size_t cap, bool* truncated) {
  std::string out(cap, '\0');
  out.resize(wideToUtf8(w.c_str(), out.data(), cap, truncated));
  return out;
}

}  // namespace

TEST_CASE("boundedUtf8Length: short strings are whole, long ones are cut before a lead byte") {
  bool t = true;
  CHECK(boundedUtf8Length("", 8, &t) == 0);
  CHECK_FALSE(t);
  CHECK(boundedUtf8Length("forward", 8, &t) == 7);
  CHECK_FALSE(t);
  CHECK(boundedUtf8Length("forwards", 8, &t) == 8);  // exactly the bound: not cut
  CHECK_FALSE(t);
  CHECK(boundedUtf8Length("forward-compute", 8, &t) == 8);
  CHECK(t);
  // "aé中😀": 1 + 2 + 3 + 4 bytes. Cuts inside a character back up to its lead byte.
  const char* s = "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80";
  size_t want[] = {0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10};
  for (size_t max = 0; max <= 10; ++max) {
    CAPTURE(max);
    CHECK(boundedUtf8Length(s, max, &t) == want[max]);
    CHECK(t == (max < 10));
  }
}

TEST_CASE("wideToUtf8: one to four bytes, bad code points, cut before a character that does not fit") {
  bool t = true;
  CHECK(convert(L"", 16, &t).empty());
  CHECK(convert(L"forward", 16, &t) == "forward");
  CHECK_FALSE(t);
  CHECK(convert(L"\u00e9\u4e2d\U0001F600", 16, &t) == "\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80");
  CHECK_FALSE(t);
  CHECK(convert(L"\u007f\u0080\u07ff\u0800\uffff\U00010000\U0010FFFF", 32, &t) ==
        "\x7F\xC2\x80\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF\xF0\x90\x80\x80\xF4\x8F\xBF\xBF");
  // Surrogates and values beyond U+10FFFF are not characters: U+FFFD each.
  std::wstring bad;
  bad += static_cast<wchar_t>(0xD800);
  bad += static_cast<wchar_t>(0xDFFF);
  bad += static_cast<wchar_t>(0x110000);
  CHECK(convert(bad, 16, &t) == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  // "a中" needs 4 bytes: with 3, only "a" fits (no half character).
  CHECK(convert(L"a\u4e2d", 3, &t) == "a");
  CHECK(t);
  CHECK(convert(L"a\u4e2d", 4, &t) == "a\xE4\xB8\xAD");
  CHECK_FALSE(t);
}
