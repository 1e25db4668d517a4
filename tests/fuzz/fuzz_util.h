// Helpers shared by the fuzz targets and the seed writer (docs/fuzzing.md).
//
// Several targets take more than one byte string (a stream of step records, the chunks of
// a block, a key and a value). Their inputs are the pieces joined by kSeparator, so the
// seed writer and the targets agree on one framing that survives libFuzzer's mutations
// better than length prefixes: a mutation inside a piece leaves the others intact.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

// Aborts with the failed condition: libFuzzer reports it as a crash with the input.
#define FUZZ_CHECK(cond)                                                                      \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)

namespace argus::fuzz {

inline constexpr std::string_view kSeparator{"\xF5#SEP#\xF5", 7};

// Splits `in` at kSeparator; at most `max_pieces` (the last piece keeps the rest).
inline std::vector<std::string_view> splitPieces(std::string_view in, size_t max_pieces = 64) {
  std::vector<std::string_view> pieces;
  while (pieces.size() + 1 < max_pieces) {
    size_t at = in.find(kSeparator);
    if (at == std::string_view::npos) break;
    pieces.push_back(in.substr(0, at));
    in.remove_prefix(at + kSeparator.size());
  }
  pieces.push_back(in);
  return pieces;
}

inline std::string joinPieces(const std::vector<std::string>& pieces) {
  std::string out;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0) out.append(kSeparator);
    out.append(pieces[i]);
  }
  return out;
}

inline std::string_view asView(const uint8_t* data, size_t size) { return {reinterpret_cast<const char*>(data), size}; }

// Takes fixed-size parameters off the front of an input; reads past the end give zeros,
// so every input is usable.
class ParamReader {
 public:
  explicit ParamReader(std::string_view in) : in_(in) {}
  uint8_t u8() {
    if (in_.empty()) return 0;
    uint8_t v = static_cast<uint8_t>(in_[0]);
    in_.remove_prefix(1);
    return v;
  }
  // Low byte first: named, since the operands of | are evaluated in no fixed order.
  uint16_t u16() {
    const uint8_t lo = u8();
    return static_cast<uint16_t>(lo | (u8() << 8));
  }
  uint32_t u32() {
    const uint16_t lo = u16();
    return static_cast<uint32_t>(lo) | (static_cast<uint32_t>(u16()) << 16);
  }
  std::string_view rest() const { return in_; }

 private:
  std::string_view in_;
};

// Writes the little-endian parameter bytes ParamReader reads back (for the seed writer).
inline void putParam(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

}  // namespace argus::fuzz
