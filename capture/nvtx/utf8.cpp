#include "capture/nvtx/utf8.h"

#include <cstring>

namespace argus::capture::nvtx {

static_assert(sizeof(wchar_t) == 4, "NVTX W strings are UTF-32 on the platforms Argus supports");

size_t boundedUtf8Length(const char* text, size_t max_bytes, bool* truncated) {
  size_t n = strnlen(text, max_bytes + 1);
  *truncated = n > max_bytes;
  if (!*truncated) return n;
  n = max_bytes;
  // Back up over continuation bytes (10xxxxxx) so the cut falls before a lead byte.
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return n;
}

size_t wideToUtf8(const wchar_t* text, char* out, size_t cap, bool* truncated) {
  size_t n = 0;
  *truncated = false;
  for (; *text != 0; ++text) {
    uint32_t c = static_cast<uint32_t>(*text);
    if ((c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF) c = 0xFFFD;
    size_t len = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    if (n + len > cap) {
      *truncated = true;
      break;
    }
    unsigned char* p = reinterpret_cast<unsigned char*>(out + n);
    switch (len) {
      case 1:
        p[0] = static_cast<unsigned char>(c);
        break;
      case 2:
        p[0] = static_cast<unsigned char>(0xC0 | (c >> 6));
        p[1] = static_cast<unsigned char>(0x80 | (c & 0x3F));
        break;
      case 3:
        p[0] = static_cast<unsigned char>(0xE0 | (c >> 12));
        p[1] = static_cast<unsigned char>(0x80 | ((c >> 6) & 0x3F));
        p[2] = static_cast<unsigned char>(0x80 | (c & 0x3F));
        break;
      default:
        p[0] = static_cast<unsigned char>(0xF0 | (c >> 18));
        p[1] = static_cast<unsigned char>(0x80 | ((c >> 12) & 0x3F));
        p[2] = static_cast<unsigned char>(0x80 | ((c >> 6) & 0x3F));
        p[3] = static_cast<unsigned char>(0x80 | (c & 0x3F));
        break;
    }
    n += len;
  }
  return n;
}

}  // namespace argus::capture::nvtx
