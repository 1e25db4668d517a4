// UTF-8 helpers for NVTX messages: the W (wchar_t) calls are converted to UTF-8, and every
// message is cut to a bounded length without splitting a character.
//
// Both run on training threads: no allocation, the caller owns the output buffer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace argus::capture::nvtx {

// Length of the NUL-terminated `text`, cut to at most `max_bytes` at a UTF-8 character
// boundary (a continuation byte never starts the cut). *truncated says whether it was cut.
// REQUIRES: text != nullptr. Reads at most max_bytes + 1 bytes.
size_t boundedUtf8Length(const char* text, size_t max_bytes, bool* truncated);

// Converts the NUL-terminated wide string (UTF-32 on Linux: wchar_t is 4 bytes) to UTF-8
// in `out` (`cap` bytes, not NUL-terminated); returns the bytes written. Stops before a
// character that would not fit (*truncated = true). Surrogates and values above U+10FFFF
// become U+FFFD. REQUIRES: text != nullptr.
size_t wideToUtf8(const wchar_t* text, char* out, size_t cap, bool* truncated);

}  // namespace argus::capture::nvtx
